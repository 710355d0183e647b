/**
 * What a sandboxed agent with an isolated network may reach, and how (pure: tested as data).
 *
 * The agent's network namespace has only `lo`. Each allowed destination on the host's loopback
 * (the Hub, a model server named by a `*_BASE_URL`) gets a listener inside at the same address and
 * port, so `SVC_HUB_ENDPOINT=http://127.0.0.1:9810` works unchanged; the listener (socat, started
 * by the launcher script below before the harness) hands each connection to a Unix socket of the
 * broker, which connects to that one destination (egress.ts). Allowed hosts elsewhere (the model
 * APIs, settings-listed hosts such as a package registry) go through an HTTP proxy inside
 * (`HTTPS_PROXY`), bridged the same way to the broker's CONNECT proxy, which lets through only
 * those host:port pairs. Nothing else exists: no route, no DNS server, no other loopback port.
 *
 * The set is fixed when the agent starts, from the environment the broker built from records
 * (the Hub's endpoint, the harness config's and the runtime's env, including the endpoints of a
 * JSON configuration held in a variable, such as OpenCode's `OPENCODE_CONFIG_CONTENT`) and
 * settings: never from files in the workspace.
 */

export interface Destination {
  /** Lower-case host name or IP address (an IPv6 address without brackets). */
  host: string
  port: number
  /** Why it is allowed (the variable or setting that named it). */
  why: string
}

/**
 * The default API hosts of each harness (its model API and its sign-in), allowed for an agent
 * running that harness. A harness config naming another endpoint (`ANTHROPIC_BASE_URL`...) adds it.
 */
export const HARNESS_API_HOSTS: Record<string, string[]> = {
  claude: ['api.anthropic.com', 'console.anthropic.com', 'claude.ai', 'statsig.anthropic.com'],
  codex: ['api.openai.com', 'auth.openai.com', 'chatgpt.com'],
  gemini: ['generativelanguage.googleapis.com', 'cloudcode-pa.googleapis.com', 'oauth2.googleapis.com', 'www.googleapis.com'],
  opencode: ['opencode.ai', 'models.dev', 'api.anthropic.com', 'api.openai.com', 'generativelanguage.googleapis.com'],
}

/** Variables whose URL value names a destination: the Hub's endpoint, every `*_BASE_URL` and `*_ENDPOINT`. */
export const URL_ENV = /^(SVC_HUB_ENDPOINT|[A-Z0-9_]*_BASE_URL|[A-Z0-9_]*_ENDPOINT)$/

const DEFAULT_PORTS: Record<string, number> = {'http:': 80, 'https:': 443, 'ws:': 80, 'wss:': 443}

/** The harness a command runs (the executable, or the script a node runs), by its file name. */
export function harnessOf(command: string[]): string | undefined {
  const base = (arg: string | undefined) => arg?.split('/').pop() ?? ''
  // The executable, or the script a node named outright runs (npm's launchers of Codex and Gemini CLI).
  for (const arg of /^node(js)?$/.test(base(command[0])) ? [command.slice(1).find((a) => !a.startsWith('-'))] : command.slice(0, 1)) {
    const name = base(arg)
    if (!name) continue
    for (const h of Object.keys(HARNESS_API_HOSTS)) if (name === h || name.startsWith(`${h}.`)) return h
  }
  return undefined
}

/** `host:port` (`[::1]:8080` for IPv6) of settings `egress_allow`; throws on anything else. */
export function parseHostPort(s: string): {host: string; port: number} {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(s)
  const port = m ? Number(m[3]) : 0
  if (!m || port < 1 || port > 65535) throw new Error(`egress_allow entry ${JSON.stringify(s)} must be host:port (for example registry.npmjs.org:443)`)
  return {host: (m[1] ?? m[2]).toLowerCase(), port}
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)
}

/** The destination a URL names, or undefined for a value that is no http(s)/ws(s) URL. */
function urlDestination(value: string, why: string): Destination | undefined {
  let u: URL
  try {
    u = new URL(value)
  } catch {
    return undefined
  }
  const port = u.port ? Number(u.port) : DEFAULT_PORTS[u.protocol]
  if (!port || !u.hostname) return undefined
  return {host: u.hostname.replace(/^\[|\]$/g, '').toLowerCase(), port, why}
}

/** Keys of a JSON configuration whose URL value names an endpoint (OpenCode's `provider.<id>.options.baseURL`). */
const URL_KEYS = /^(base_?url|url|endpoint|api_?base)$/i

/**
 * The endpoint URLs of a variable holding a JSON configuration (`OPENCODE_CONFIG_CONTENT`): the
 * string values of URL_KEYS anywhere in it. Any other value names none.
 */
export function configUrls(value: string): string[] {
  if (!value.trimStart().startsWith('{')) return []
  let doc: unknown
  try {
    doc = JSON.parse(value)
  } catch {
    return []
  }
  const out: string[] = []
  const walk = (v: unknown, depth: number) => {
    if (depth > 20 || v === null || typeof v !== 'object') return
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (typeof x === 'string' && URL_KEYS.test(k)) out.push(x)
      else walk(x, depth + 1)
    }
  }
  walk(doc, 0)
  return out
}

export interface AllowedInput {
  /** The agent's environment as the broker built it (Hub endpoint, runtime, harness config and secret env). */
  env: Record<string, string>
  /** The harness argv (its default API hosts are allowed). */
  command: string[]
  /** Settings `runtimes.<name>.egress_allow`. */
  extra: string[]
}

/** Every destination the agent may reach, once each, in a stable order. */
export function allowedDestinations(i: AllowedInput): Destination[] {
  const out = new Map<string, Destination>()
  const add = (d: Destination | undefined) => {
    if (d && !out.has(`${d.host}:${d.port}`)) out.set(`${d.host}:${d.port}`, d)
  }
  for (const k of Object.keys(i.env).sort()) {
    if (URL_ENV.test(k)) add(urlDestination(i.env[k], k))
    else for (const url of configUrls(i.env[k])) add(urlDestination(url, k))
  }
  const harness = harnessOf(i.command)
  for (const host of harness ? HARNESS_API_HOSTS[harness] : []) add({host, port: 443, why: `${harness} API`})
  for (const e of i.extra) add({...parseHostPort(e), why: 'egress_allow'})
  return [...out.values()]
}

/** Where the broker's socket directory is mounted inside the sandbox (short: a Unix socket path has at most 107 bytes). */
export const SANDBOX_NET_DIR = '/run/svc-egress'

export interface Listener {
  /** Address and port inside the sandbox, and the host-side destination of the same address and port. */
  address: string
  port: number
  /** The broker's Unix socket it is bridged to, as the sandbox sees it (in SANDBOX_NET_DIR). */
  socket: string
}

export interface EgressPlan {
  /** Loopback destinations, each listened on inside at the same address and port. */
  loopback: Listener[]
  /** The proxy for everything else: its port on 127.0.0.1 inside, its socket, and the host:port pairs it lets through. */
  proxy?: Listener & {allow: string[]}
}

/**
 * Where each destination is reached inside. `localhost` is listened on at 127.0.0.1 and ::1
 * (clients try either). A loopback port below 1024 cannot be listened on by an unprivileged
 * process in the sandbox, so it is refused with what to do instead.
 */
export function egressPlan(dests: Destination[], socketDir: string, runtimeName = 'local'): EgressPlan {
  const loopback = new Map<string, Listener>()
  const proxied: string[] = []
  for (const d of dests) {
    if (!isLoopback(d.host)) {
      proxied.push(`${d.host}:${d.port}`)
      continue
    }
    if (d.port < 1024) {
      throw new Error(`${d.why} names ${d.host}:${d.port}: a loopback port below 1024 cannot be reached from an agent's isolated network; use a port from 1024 up, or set runtimes.${runtimeName}.network: host`)
    }
    for (const address of d.host === 'localhost' ? ['127.0.0.1', '::1'] : [d.host]) {
      const key = `${address}:${d.port}`
      if (!loopback.has(key)) loopback.set(key, {address, port: d.port, socket: `${socketDir}/l${loopback.size}.sock`})
    }
  }
  const plan: EgressPlan = {loopback: [...loopback.values()]}
  if (proxied.length) {
    const used = new Set(plan.loopback.map((l) => l.port))
    let port = 3128
    while (used.has(port)) port++
    // The loopback destinations too: a client that ignores NO_PROXY sends them to the proxy.
    const local = dests.filter((d) => isLoopback(d.host)).map((d) => `${d.host}:${d.port}`)
    plan.proxy = {address: '127.0.0.1', port, socket: `${socketDir}/proxy.sock`, allow: [...proxied, ...local]}
  }
  return plan
}

/** Environment that sends the agent's other traffic to the proxy (set over any the agent had). */
export function egressEnv(plan: EgressPlan): Record<string, string> {
  if (!plan.proxy) return {}
  const url = `http://127.0.0.1:${plan.proxy.port}`
  const none = 'localhost,127.0.0.1,::1'
  return {HTTPS_PROXY: url, HTTP_PROXY: url, https_proxy: url, http_proxy: url, NO_PROXY: none, no_proxy: none, NODE_USE_ENV_PROXY: '1'}
}

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

/**
 * The forwarders of the sandbox's network, as two parts of its first program (launcher.ts):
 * `start` runs one socat per listener, all in a session of their own (setsid: a Ctrl-C typed to
 * the harness does not reach them), and `wait` returns once each listens, or ends the start with
 * a message (exit 70) instead of a harness that cannot reach its model. The launcher runs `start`
 * first and `wait` just before the harness, so the forwarders load while it does the rest.
 *
 * Waiting blocks, with no process per look (a fork costs 2 ms of CPU on a small VM, an exec 3):
 * the socats' logs (`-d -d`) share a pipe read by one subshell, which returns once each has
 * written `listening on` (right after its listen()), and fails, quoting it, at a line that is no
 * note of socat's (an error, setsid's or the shell's complaint) or when every writer is gone.
 * Afterwards socat's log lines (a few per connection) meet a closed pipe: socat ignores SIGPIPE
 * (it must, to outlive a closed connection), so they are dropped.
 *
 * With `overlap` (a harness that connects late: harnessStartsLate) there is no `wait`: the harness
 * runs at once and the forwarders come up while it loads; a failing one still ends the start: the
 * reader prints why and kills the harness (the launcher's PID, which the harness took by exec).
 */
export function forwarderScript(plan: EgressPlan, socat: string, overlap = false, timeoutS = FORWARDERS_TIMEOUT_S): {start: string; wait: string} {
  const all = [...plan.loopback, ...(plan.proxy ? [plan.proxy] : [])]
  if (!all.length) return {start: '', wait: ''}
  const socats = all.map((l) => {
    const v6 = l.address.includes(':')
    const listen = `${v6 ? 'TCP6' : 'TCP4'}-LISTEN:${l.port},bind=${v6 ? `[${l.address}]` : l.address},reuseaddr,fork`
    return `${q(socat)} -d -d ${q(listen)} ${q(`UNIX-CONNECT:${l.socket}`)} &`
  })
  // A socat that neither listens nor fails would hold the start (or, overlapping, leave a harness
  // that cannot reach its model): after timeoutS the watchdog's line ends it like a failure.
  socats.push(`(sleep ${timeoutS}; echo ${TIMEOUT_LINE} >&2) &`)
  // Levels N, I and W are socat's notes (`2026/11/27 20:31:54 socat[12] N ...`, named as socat was run); E and F its errors.
  // \r\n: a harness may have put the terminal in raw mode. KILL: no last screen drawn over the message.
  const fail = (why: string) => `printf '\\r\\n%s\\r\\n' "svc: ${why}" >&2; ${overlap ? 'kill -KILL $$; ' : ''}exit 1`
  const reader = [
    `svc_n=0; while read -r svc_l; do case "$svc_l" in`,
    `*' listening on '*) svc_n=$((svc_n + 1)); [ $svc_n -lt ${all.length} ] || exit 0 ;;`,
    `${TIMEOUT_LINE}) ${fail(`the network forwarders of the sandbox (socat) did not listen within ${timeoutS} s`)} ;;`,
    `*[0-9]'] '[NIW]' '*) ;;`,
    `*) ${fail('a network forwarder of the sandbox (socat) failed: $svc_l')} ;;`,
    `esac; done; ${fail('the network forwarders of the sandbox (socat) exited before they listened')}`,
  ].join(' ')
  return {
    // Overlapping, the reader is started from a subshell that ends at once, so bwrap's init reaps
    // it, not the harness (which never waits for a child it did not start).
    start: overlap
      ? `(setsid /bin/sh -c ${q(socats.join(' '))} 2>&1 >/dev/null </dev/null | { ${reader}; } &)`
      : `setsid /bin/sh -c ${q(socats.join(' '))} 2>&1 >/dev/null </dev/null | { ${reader}; } & svc_fw=$!`,
    wait: overlap ? '' : 'wait "$svc_fw" || exit 70',
  }
}

/** How long the forwarders may take to listen (they take ~30-100 ms), and the watchdog's line after it. */
export const FORWARDERS_TIMEOUT_S = 20
const TIMEOUT_LINE = 'svc-forwarders-timeout'

/**
 * Whether the harness may start while its forwarders come up (forwarderScript's `overlap`): only
 * Claude Code run directly (no setup step first, which could connect at once), whose first
 * connection comes after its own start (measured: 1.5 s after its exec at load 10, and its hooks
 * run `svc`, a Node program, later still), while the forwarders listen within ~30-100 ms.
 */
export function harnessStartsLate(command: string[], prelude: string[] | undefined): boolean {
  return !prelude?.length && harnessOf(command) === 'claude'
}

/**
 * `/etc/passwd` (or `/etc/group`) as the agent sees it when it runs as `uid` in a user
 * namespace: the host's entries, with `uid` named `svc-agent` and HOME its own, so programs that
 * look the user up (git's default identity, ssh) find it.
 */
export function identityFile(hostText: string, uid: number, kind: 'passwd' | 'group', home: string): string {
  const keep = hostText.split('\n').filter((l) => l && l.split(':')[2] !== String(uid))
  keep.push(kind === 'passwd' ? `svc-agent:x:${uid}:${uid}:svc agent:${home}:/bin/sh` : `svc-agent:x:${uid}:`)
  return keep.join('\n') + '\n'
}
