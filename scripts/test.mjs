// `npm test`: builds, then type-checks beside the test run instead of before it. The type check
// is about half a minute of one core, while the first minutes of the suite mostly wait on
// Hubs, tmux and harnesses: run one after the other, CI paid both. The suite's output streams as
// it comes; the type checker's is held and printed after, so the two never interleave.
// Exits non-zero when either fails. Arguments go to vitest (`npm test -- --reporter=json`).
import {spawn} from 'node:child_process'
import {existsSync, writeFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const bin = (name) => fileURLToPath(new URL(`../node_modules/.bin/${name}`, import.meta.url))

/**
 * The suite's agents run at the local runtime's default `nice` 10, which on Linux with autogroups
 * is the nice value of each agent's own session. The suite itself (vitest, its Hubs, its CLI
 * calls) is one session at nice 0: on a busy CI machine it would get ten times the CPU of each
 * agent, and a harness that needs seconds of CPU to start (OpenCode: about 8 s) took minutes. So
 * the suite runs in a session of its own whose autogroup yields as much as the agents do; it
 * is its own session so that the caller's terminal session keeps its priority.
 */
const AGENT_NICE = 10

function yieldLikeAgents(pid) {
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(AGENT_NICE))
  } catch {
    // No autogroups (another OS, or a kernel without them): nothing to even out.
  }
}

/** Runs a command; `quiet` collects its output instead of passing it through. */
function run(cmd, args, {quiet = false, ownSession = false} = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {cwd: root, stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit', detached: ownSession})
    if (ownSession && child.pid) {
      yieldLikeAgents(child.pid)
      // Its own session gets no signal from the terminal: pass Ctrl-C and termination on.
      const forward = (sig) => {
        try {
          process.kill(-child.pid, sig)
        } catch {
          // Already gone.
        }
      }
      for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => forward(sig))
    }
    let out = ''
    if (quiet) for (const s of [child.stdout, child.stderr]) s.on('data', (d) => (out += d))
    child.on('error', (err) => resolve({code: 1, out: `${cmd}: ${err.message}\n`}))
    child.on('close', (code, signal) => resolve({code: code ?? (signal ? 1 : 0), out}))
  })
}

const built = await run(process.execPath, ['scripts/build.mjs'])
if (built.code !== 0) process.exit(built.code)

// Both projects (the CLI/Hub and the web pages) one after the other: each takes a core.
const typecheck = run(bin('tsc'), ['--noEmit'], {quiet: true}).then(async (r) => (r.code !== 0 ? r : run(bin('tsc'), ['-p', 'web'], {quiet: true})))
const tests = await run(bin('vitest'), ['run', ...process.argv.slice(2)], {ownSession: true})
const types = await typecheck
if (types.code !== 0) {
  process.stdout.write(`\nType check failed (tsc):\n${types.out}`)
  // .ci/run counts it among the failures of its last line.
  if (existsSync(`${root}/test-output`)) writeFileSync(`${root}/test-output/typecheck-failed.txt`, types.out)
} else process.stdout.write('\nType check passed (tsc --noEmit, tsc -p web).\n')
process.exit(tests.code !== 0 ? tests.code : types.code)
