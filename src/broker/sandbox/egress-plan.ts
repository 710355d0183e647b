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
 * The sandbox's first program (`sh -c <script> svc-egress <harness argv...>`): one socat per
 * listener, in a session of its own (setsid: a Ctrl-C typed to the harness does not reach it),
 * then waits until each listens (the kernel's socket table of the sandbox's own network, so no
 * connection is made) and runs the harness in its place. A listener that never comes up ends
 * the start with a message instead of a harness that cannot reach its model.
 * Every agent start waits for this: the table is read with the shell's own `read` (no process
 * per look, the table of a fresh network holds only these sockets) every 10 ms.
 */
export function launcherScript(plan: EgressPlan, socat: string): string {
  const all = [...plan.loopback, ...(plan.proxy ? [plan.proxy] : [])]
  const lines: string[] = []
  const tables = new Set<string>()
  const checks: string[] = []
  for (const l of all) {
    const v6 = l.address.includes(':')
    const listen = `${v6 ? 'TCP6' : 'TCP4'}-LISTEN:${l.port},bind=${v6 ? `[${l.address}]` : l.address},reuseaddr,fork`
    lines.push(`setsid ${q(socat)} ${q(listen)} ${q(`UNIX-CONNECT:${l.socket}`)} </dev/null >/dev/null 2>&1 &`)
    tables.add(`/proc/net/${v6 ? 'tcp6' : 'tcp'}`)
    // A socket in state 0A (LISTEN) on the port, in the table of its address family.
    checks.push(`case "$listening" in *' ${v6 ? '6' : '4'}:${l.port.toString(16).toUpperCase().padStart(4, '0')} '*) ;; *) up=0 ;; esac`)
  }
  return [
    ...lines,
    'n=0',
    'while :; do',
    "  listening=' '",
    ...[...tables].map((t) => `  while read -r _ addr _ st _; do [ "$st" = 0A ] && listening="\${listening}${t.endsWith('6') ? '6' : '4'}:\${addr##*:} "; done < ${t}`),
    '  up=1',
    ...checks.map((c) => `  ${c}`),
    '  [ "$up" = 1 ] && break',
    '  n=$((n+1))',
    `  if [ "$n" -gt 2000 ]; then echo "svc: the sandbox's network forwarders (socat) did not start" >&2; exit 70; fi`,
    '  sleep 0.01',
    'done',
    'exec "$@"',
  ].join('\n')
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
