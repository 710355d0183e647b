// Planner benchmark: builds a legacy fixture (default 100k agents, chains up to 8 hops) in a temp
// SQLite file, then times a full adoption preview as the admin API and the start-up migration
// run it: loadWorld (bulk reads) + planAdoption. Beside it, in the same run, a plain in-memory
// walk of the same chains (each live agent up its delegators to the root, no rules, no
// memoisation) over maps already in memory: the floor any planner pays for touching every hop.
// Prints the best and median of BENCH_ROUNDS (5) rounds of each. Target: a full preview under
// 1.5 s on SQLite (printed, never asserted).
// BENCH_AGENTS (100000), BENCH_DEPTH (8), BENCH_SEED (1) change the fixture; BENCH_FIXTURE=<file>
// reuses a SQLite fixture built earlier (npm run fixture:legacy) instead of building one.
import {mkdtempSync, rmSync} from 'node:fs'
import {availableParallelism, loadavg, tmpdir} from 'node:os'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'
import {register} from 'tsx/esm/api'

register()
const {buildLegacyFixture} = await import('../../test/helpers/legacy-fixture.ts')
const {loadWorld, planAdoption} = await import('../../src/domain/delegation/planner.ts')
const {openStore} = await import('../../src/store/store.ts')

const AGENTS = Number(process.env.BENCH_AGENTS ?? 100_000)
const DEPTH = Number(process.env.BENCH_DEPTH ?? 8)
const SEED = Number(process.env.BENCH_SEED ?? 1)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const TARGET_MS = 1500

const dir = mkdtempSync(join(tmpdir(), 'svc-bench-planner-'))
const url = process.env.BENCH_FIXTURE ?? join(dir, 'legacy.db')
const ms = (t) => `${t.toFixed(0)} ms`
// Process CPU time beside wall time: on a shared, loaded machine wall time mostly measures waiting.
const cpuMs = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return {best: s[0], median: s[Math.floor(s.length / 2)]}
}

/** The plain walk: every live agent up its single active edge's agent delegators to the root. */
function plainWalk(world) {
  const parent = new Map()
  for (const [id, edges] of world.activeEdges) if (edges[0].delegator.kind === 'agent') parent.set(id, edges[0].delegator.id)
  let hops = 0
  for (const a of world.agents.values()) {
    if (a.deleted) continue
    let cur = a.id
    for (let d = 0; d < 64 && cur !== undefined; d++) {
      hops++
      cur = parent.get(cur)
    }
  }
  return hops
}

try {
  let t = performance.now()
  if (process.env.BENCH_FIXTURE) process.stdout.write(`fixture: ${url} (reused)\n`)
  else {
    await buildLegacyFixture({driver: 'sqlite', url, agents: AGENTS, depth: DEPTH, seed: SEED, tokens: false})
    process.stdout.write(`fixture: ${AGENTS} agents, depth ${DEPTH}, seed ${SEED}, built in ${ms(performance.now() - t)}\n`)
  }
  const store = await openStore({driver: 'sqlite', url})
  try {
    const load = []
    const plan = []
    const full = []
    const walk = []
    const fullCpu = []
    const walkCpu = []
    let hops = 0
    let walked = 0
    let live = 0
    for (let r = 0; r < ROUNDS; r++) {
      t = performance.now()
      let c = cpuMs()
      const world = await loadWorld(store)
      const loaded = performance.now()
      hops = planAdoption(world).length
      const planned = performance.now()
      load.push(loaded - t)
      plan.push(planned - loaded)
      full.push(planned - t)
      fullCpu.push(cpuMs() - c)
      t = performance.now()
      c = cpuMs()
      walked = plainWalk(world)
      walk.push(performance.now() - t)
      walkCpu.push(cpuMs() - c)
      live = [...world.agents.values()].filter((a) => !a.deleted).length
    }
    const f = stats(full)
    const w = stats(walk)
    process.stdout.write(`live agents: ${live}, hops planned: ${hops}, hops walked by the plain walk: ${walked}\n`)
    process.stdout.write(`full preview (loadWorld + planAdoption): best ${ms(f.best)}, median ${ms(f.median)}  [loadWorld median ${ms(stats(load).median)}, planAdoption median ${ms(stats(plan).median)}]\n`)
    process.stdout.write(`  CPU time of the full preview: best ${ms(stats(fullCpu).best)}, median ${ms(stats(fullCpu).median)}\n`)
    process.stdout.write(`plain in-memory walk of the same chains: best ${ms(w.best)}, median ${ms(w.median)} (CPU median ${ms(stats(walkCpu).median)})\n`)
    process.stdout.write(`planAdoption / plain walk (medians): ${(stats(plan).median / w.median).toFixed(1)}x\n`)
    process.stdout.write(`target: full preview < ${TARGET_MS} ms on SQLite: ${f.median < TARGET_MS ? 'met' : 'NOT met'} (median wall)\n`)
    process.stdout.write(`load average at the end: ${loadavg().map((x) => x.toFixed(1)).join(' ')} on ${availableParallelism()} cores\n`)
  } finally {
    await store.close()
  }
} finally {
  rmSync(dir, {recursive: true, force: true})
}
