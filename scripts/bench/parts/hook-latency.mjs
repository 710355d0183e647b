// Hook latency (a part of `npm run bench -- agents` and `-- status`; not a bench of its own: the
// dispatcher lists only scripts/bench/*.mjs). One live agent of a running Hub reports a Claude
// Code `PreToolUse` three ways, CONCURRENCY (20) at once as 20 agents' hooks would, ROUNDS times
// each, interleaved:
// - command hook: `svc hook claude PreToolUse` (the dedicated hook entry of the executable, what
//   Claude Code runs for its other events and other harnesses run for all), payload on stdin,
//   timed from its spawn to its exit (it exits once the Hub answered: the report is visible);
// - curl one-liner: `sh -c 'curl ... --data-binary @- <hub>/api/v1/agents/<id>/hooks/claude'`,
//   the lightest command a harness could run (the Hub maps the payload), spawn to exit;
// - HTTP hook: a POST of the payload to that route from this process, what Claude Code's
//   `type: "http"` hook does without any process, timed to the answer.
// Each report is visible in GET /api/v1/agents/:id by the time it is answered (reads overlay
// reports before their write commits). Target: p99 <= 250 ms. Printed, never asserted.
import {spawn} from 'node:child_process'
import http from 'node:http'

const sorted = (xs) => [...xs].sort((a, b) => a - b)
const pct = (xs, p) => (xs.length ? sorted(xs)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)] : NaN)

/** Runs `argv` with `input` on stdin; resolves the ms from spawn to exit (rejects on a non-zero exit). */
function timedProcess(argv, env, input) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const child = spawn(argv[0], argv.slice(1), {env, stdio: ['pipe', 'ignore', 'pipe']})
    let err = ''
    child.stderr.on('data', (d) => (err += d))
    child.on('error', reject)
    child.on('exit', (code) => (code === 0 && !err.includes('failed') ? resolve(performance.now() - t0) : reject(new Error(`${argv.join(' ')}: exit ${code} ${err}`))))
    child.stdin.end(input)
  })
}

/** POSTs `body` to `url` as Claude Code's HTTP hook does; resolves the ms to the answer. */
function timedPost(url, token, body) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const req = http.request(url, {method: 'POST', headers: {'content-type': 'application/json', authorization: `Bearer ${token}`, 'content-length': Buffer.byteLength(body)}}, (res) => {
      res.resume()
      res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`HTTP hook: ${res.statusCode}`))))
    })
    req.on('error', reject)
    req.end(body)
  })
}

/**
 * Prints the three latencies for agent `agentId` (token `token`) of the Hub at `hubUrl`. `cli` is
 * the argv prefix that runs svc (dist/svc, or node bin/run.js); `baseEnv` the environment of the
 * processes (without SVC_* and NODE_EXTRA_CA_CERTS).
 */
export async function hookLatencyPart({hubUrl, agentId, token, cli, baseEnv, out, rounds = Number(process.env.BENCH_HOOK_ROUNDS ?? 5), concurrency = Number(process.env.BENCH_HOOK_CONCURRENCY ?? 20)}) {
  const url = `${hubUrl}/api/v1/agents/${encodeURIComponent(agentId)}/hooks/claude`
  const env = {...baseEnv, SVC_HUB_ENDPOINT: hubUrl, SVC_AGENT_ID: agentId, SVC_AUTH_TOKEN: token}
  const payload = (i) => JSON.stringify({session_id: 'bench', transcript_path: '/nonexistent', cwd: '/tmp', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: {command: `bench ${i}`}})
  // The token goes in the environment, not the command line (ps shows argv).
  const curl = ['sh', '-c', `exec curl -sf -o /dev/null -H "authorization: Bearer $SVC_AUTH_TOKEN" -H 'content-type: application/json' --data-binary @- '${url}'`]
  const ways = {
    'command hook (svc hook claude)': (i) => timedProcess([...cli, 'hook', 'claude', 'PreToolUse'], env, payload(i)),
    'curl one-liner (command)': (i) => timedProcess(curl, env, payload(i)),
    'HTTP hook (no process)': (i) => timedPost(url, token, payload(i)),
  }
  const times = Object.fromEntries(Object.keys(ways).map((k) => [k, []]))
  const failed = Object.fromEntries(Object.keys(ways).map((k) => [k, 0]))
  // Warm-up of each way, then the rounds, interleaved so drift in the machine's load hits all.
  for (const way of Object.values(ways)) await way(-1).catch(() => {})
  for (let r = 0; r < rounds; r++) {
    for (const [name, way] of Object.entries(ways)) {
      // A report that failed (a timeout on an overloaded machine) is counted, not timed.
      const got = await Promise.all(Array.from({length: concurrency}, (_, i) => way(r * concurrency + i).catch(() => null)))
      times[name].push(...got.filter((t) => t !== null))
      failed[name] += got.filter((t) => t === null).length
    }
  }
  out(`hook latency: ${concurrency} at once x ${rounds} rounds, spawn (or POST) to the Hub's answer (the change visible)`)
  for (const [name, xs] of Object.entries(times)) {
    const p99 = pct(xs, 99)
    out(`  ${name.padEnd(32)} p50 ${pct(xs, 50).toFixed(0).padStart(5)} ms  p99 ${p99.toFixed(0).padStart(5)} ms  (target p99 <= 250 ms: ${p99 <= 250 && !failed[name] ? 'met' : 'MISSED'})  failed ${failed[name]}`)
  }
}
