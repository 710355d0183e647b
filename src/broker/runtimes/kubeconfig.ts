/**
 * Just enough kubeconfig to reach an API server without a client library: server, CA, token or
 * client certificate, insecure-skip-tls-verify, namespace. exec and auth-provider plugins are
 * refused with a clear message (they run programs; out of scope for the broker).
 */
import {readFileSync} from 'node:fs'
import {homedir} from 'node:os'
import {delimiter, dirname, isAbsolute, join} from 'node:path'
import {parse} from 'yaml'

interface Named<T> {
  name: string
  value: T
  /** Directory of the file that defined it: relative paths inside are relative to it. */
  dir: string
}

export interface KubeconfigData {
  currentContext?: string
  clusters: Array<Named<Record<string, unknown>>>
  users: Array<Named<Record<string, unknown>>>
  contexts: Array<Named<Record<string, unknown>>>
}

/** What a request needs: where, how to trust it, how to authenticate, which namespace. */
export interface KubeTarget {
  server: string
  ca?: Buffer
  insecureSkipTlsVerify: boolean
  token?: string
  cert?: Buffer
  key?: Buffer
  namespace: string
}

/** The kubeconfig files in use: $KUBECONFIG (a path list, first wins) or ~/.kube/config. */
export function kubeconfigPaths(env: NodeJS.ProcessEnv = process.env): string[] {
  const list = env.KUBECONFIG?.split(delimiter).filter(Boolean)
  return list?.length ? list : [join(env.HOME || homedir(), '.kube', 'config')]
}

export function loadKubeconfig(paths: string[]): KubeconfigData {
  const out: KubeconfigData = {clusters: [], users: [], contexts: []}
  let found = 0
  for (const path of paths) {
    let text: string
    try {
      text = readFileSync(path, 'utf8')
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue
      throw new Error(`cannot read kubeconfig ${path}: ${(e as Error).message}`)
    }
    found += 1
    let doc: Record<string, unknown>
    try {
      doc = (parse(text) ?? {}) as Record<string, unknown>
    } catch (e) {
      throw new Error(`kubeconfig ${path} is not valid YAML: ${(e as Error).message}`)
    }
    const dir = dirname(path)
    out.currentContext ??= (doc['current-context'] as string | undefined) || undefined
    // Earlier files win on a name clash, as kubectl merges them.
    const add = (list: Array<Named<Record<string, unknown>>>, entries: unknown, field: string) => {
      for (const e of (Array.isArray(entries) ? entries : []) as Array<Record<string, unknown>>) {
        const name = e?.name as string | undefined
        if (name && !list.some((x) => x.name === name)) list.push({name, value: (e[field] ?? {}) as Record<string, unknown>, dir})
      }
    }
    add(out.clusters, doc.clusters, 'cluster')
    add(out.users, doc.users, 'user')
    add(out.contexts, doc.contexts, 'context')
  }
  if (found === 0) throw new Error(`no kubeconfig found (looked at ${paths.join(', ')}): set KUBECONFIG or create ~/.kube/config`)
  return out
}

/** Resolves a context (default: current-context) into a request target. */
export function resolveKubeTarget(cfg: KubeconfigData, opts: {context?: string; namespace?: string} = {}): KubeTarget {
  const ctxName = opts.context || cfg.currentContext
  if (!ctxName) throw new Error('kubeconfig has no current-context: set `context` on the kubernetes runtime')
  const ctx = cfg.contexts.find((c) => c.name === ctxName)
  if (!ctx) throw new Error(`kubeconfig has no context ${JSON.stringify(ctxName)} (have: ${cfg.contexts.map((c) => c.name).join(', ') || 'none'})`)
  const clusterName = ctx.value.cluster as string | undefined
  const cluster = cfg.clusters.find((c) => c.name === clusterName)
  if (!cluster) throw new Error(`kubeconfig context ${ctxName} names cluster ${JSON.stringify(clusterName)}, which is not defined`)
  const server = cluster.value.server as string | undefined
  if (!server) throw new Error(`kubeconfig cluster ${clusterName} has no server`)
  const target: KubeTarget = {
    server: server.replace(/\/+$/, ''),
    insecureSkipTlsVerify: cluster.value['insecure-skip-tls-verify'] === true,
    ca: material(cluster.value, 'certificate-authority', cluster.dir),
    namespace: opts.namespace || (ctx.value.namespace as string | undefined) || 'default',
  }
  const userName = ctx.value.user as string | undefined
  if (userName) {
    const user = cfg.users.find((u) => u.name === userName)
    if (!user) throw new Error(`kubeconfig context ${ctxName} names user ${JSON.stringify(userName)}, which is not defined`)
    const u = user.value
    if (u.exec || u['auth-provider']) throw new Error(`kubeconfig user ${userName} uses an exec or auth-provider plugin, which the broker does not run: use a token or a client certificate`)
    if (typeof u.token === 'string') target.token = u.token
    else if (typeof u.tokenFile === 'string') target.token = readFileSync(rel(u.tokenFile, user.dir), 'utf8').trim()
    target.cert = material(u, 'client-certificate', user.dir)
    target.key = material(u, 'client-key', user.dir)
    if (!!target.cert !== !!target.key) throw new Error(`kubeconfig user ${userName} has a client certificate without its key (or the reverse)`)
  }
  return target
}

/** `<field>-data` (base64) or `<field>` (a file path). */
function material(obj: Record<string, unknown>, field: string, dir: string): Buffer | undefined {
  const data = obj[`${field}-data`]
  if (typeof data === 'string' && data) return Buffer.from(data, 'base64')
  const file = obj[field]
  if (typeof file === 'string' && file) {
    try {
      return readFileSync(rel(file, dir))
    } catch (e) {
      throw new Error(`cannot read ${field} ${file}: ${(e as Error).message}`)
    }
  }
  return undefined
}

function rel(p: string, dir: string): string {
  return isAbsolute(p) ? p : join(dir, p)
}
