// Environments benchmark (issue 29, docs/environments.md). `npm run bench -- environment [copy|preview]`
// runs both parts by default:
//
// - copy (this file): `workspace.copy` of a BENCH_COPY_MB (200) MB node_modules of BENCH_COPY_FILES
//   (50,000) files, in 500 packages with a .bin of links, from a checkout into a new work tree,
//   through the broker's own copy (src/broker/workspace/copy-files.ts). BENCH_ROUNDS (5) rounds,
//   each into a fresh work tree; prints the median and best, and the method the file system
//   allowed (reflink: FICLONE clones; copy: bytes copied). Target: median <= 2 s where reflinks
//   are possible (printed, never asserted).
// - preview: the throughput of the Hub's port forward (helper env-ports), in
//   scripts/bench/parts/environment-preview.mjs, run here when that file exists.
import {existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {loadavg, tmpdir} from 'node:os'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'
import {pathToFileURL} from 'node:url'
import {register} from 'tsx/esm/api'

register()
const parts = process.argv.slice(2)
const want = (p) => parts.length === 0 || parts.includes(p)

async function copyPart() {
  const {copyIntoWorkspace} = await import('../../src/broker/workspace/copy-files.ts')
  const MB = Number(process.env.BENCH_COPY_MB ?? 200)
  const FILES = Number(process.env.BENCH_COPY_FILES ?? 50_000)
  const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
  const TARGET_MS = 2000
  const root = mkdtempSync(join(tmpdir(), 'svc-bench-env-'))
  try {
    const checkout = join(root, 'checkout')
    const nm = join(checkout, 'node_modules')
    const PACKAGES = 500
    const size = Math.floor((MB * 1024 * 1024) / FILES)
    const chunk = Buffer.alloc(size, 'x')
    mkdirSync(join(nm, '.bin'), {recursive: true})
    for (let p = 0; p < PACKAGES; p++) {
      mkdirSync(join(nm, `pkg${p}`, 'lib'), {recursive: true})
      writeFileSync(join(nm, `pkg${p}`, 'package.json'), `{"name":"pkg${p}","version":"1.0.0"}\n`)
      symlinkSync(`../pkg${p}/lib/f0.js`, join(nm, '.bin', `pkg${p}`))
    }
    for (let i = 0; i < FILES - PACKAGES; i++) writeFileSync(join(nm, `pkg${i % PACKAGES}`, 'lib', `f${Math.floor(i / PACKAGES)}.js`), chunk)
    writeFileSync(join(checkout, '.env'), 'A=1\n')
    const times = []
    let method = null
    let files = 0
    for (let r = 0; r < ROUNDS; r++) {
      const work = join(root, `work${r}`)
      mkdirSync(work)
      const t0 = performance.now()
      const res = await copyIntoWorkspace(checkout, work, ['.env', 'node_modules'])
      times.push(performance.now() - t0)
      method = res.method
      files = res.files + res.links
      rmSync(work, {recursive: true, force: true})
    }
    times.sort((a, b) => a - b)
    const median = times[Math.floor(times.length / 2)]
    console.log(`copy: ${files} files and links, ${MB} MB, method ${method}, ${ROUNDS} rounds (load ${loadavg()[0].toFixed(2)})`)
    console.log(`copy: median ${median.toFixed(0)} ms, best ${times[0].toFixed(0)} ms (target <= ${TARGET_MS} ms where reflinks or hard-link-safe copies are possible: ${median <= TARGET_MS ? 'met' : 'NOT met'}${method === 'copy' ? '; this file system has no reflinks, so every byte was copied' : ''})`)
  } finally {
    rmSync(root, {recursive: true, force: true})
  }
}

if (want('copy')) await copyPart()
const preview = new URL('./parts/environment-preview.mjs', import.meta.url)
if (want('preview')) {
  if (existsSync(preview)) await import(pathToFileURL(preview.pathname).href)
  else console.log('preview: not measured (scripts/bench/parts/environment-preview.mjs is not there)')
}
