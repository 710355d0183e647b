/**
 * What a local agent may see, as one policy, and the bubblewrap argv and environment that
 * enforce it. Pure: the host facts (which system directories exist, which are symlinks, the
 * git paths of a worktree) are read by host.ts and passed in, so the policy is tested as data.
 *
 * The agent sees: system directories read-only (sensitive files in them masked), a fresh /dev,
 * its own /proc (new PID namespace: no other process of the host is visible or signalable), a
 * private /tmp, its worktree and HOME read-write, the extra writable paths (the checkout's
 * `.git` parts a worktree commits into) read-write and the readable ones (the svc program its
 * hooks run) read-only, all at their host paths. Nothing else of the host's file system exists
 * inside: not the Hub's or the user's ~/.svc, not other agents' worktrees or homes, not the
 * tmux socket. With `network: 'isolated'` it has its own network namespace (only `lo`): what
 * it may reach is forwarded in by the broker (egress-plan.ts, egress.ts). With `uid` it runs as
 * that uid in a user namespace (a broker running as root: the agent is not root even inside).
 * Every capability is dropped: the broker may run as root, and root with CAP_SYS_ADMIN could
 * mount its way out; bwrap also sets no_new_privs, so no setuid program gives them back.
 */

/** A top-level system path of the host: a directory bound read-only, or a symlink recreated (merged /usr). */
export interface SystemPath {
  path: string
  symlinkTo?: string
}

export interface SandboxPolicy {
  /** The agent's worktree: read-write, and the working directory. */
  workdir?: string
  /** The agent's own HOME: read-write. */
  home: string
  /** Read-write at the same path. */
  writable: string[]
  /** Read-only at the same path; missing ones are skipped. */
  readable: string[]
  system: SystemPath[]
  /** Files hidden behind an empty one (e.g. /etc/shadow when the broker runs as root). */
  masked: string[]
  /** Host paths bound read-only at another path: over system files (`/etc/passwd` naming the sandbox uid), or the broker's socket directory at a short path. */
  overlays?: Array<{source: string; dest: string}>
  /** `isolated`: own network namespace, only `lo`; `host` (default): the host's network. */
  network?: 'host' | 'isolated'
  /** Run as this uid and gid in a new user namespace; absent: bwrap's default (the broker's uid). */
  uid?: number
}

/** Top-level host paths bound read-only when present. /var, /run, /root, /home, /srv, /mnt and /tmp are not. */
export const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc', '/opt', '/sys']

/** Files of those directories that are never shown. */
export const MASKED_FILES = ['/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-', '/etc/sudoers']

const depth = (p: string) => p.split('/').filter(Boolean).length

function checkPath(p: string, what: string) {
  if (!p.startsWith('/') || p.split('/').includes('..')) throw new Error(`sandbox ${what} ${JSON.stringify(p)} must be an absolute path without ".."`)
}

/**
 * bwrap argv (without the command): system first, then /dev, /proc and /tmp, then the agent's
 * paths from the shallowest down, so a writable path inside a readable one (`.git/objects`
 * inside `.git`) is mounted over it; a path named both readable and writable is writable.
 */
export function bwrapArgs(p: SandboxPolicy): string[] {
  const args: string[] = []
  for (const s of p.system) {
    checkPath(s.path, 'system path')
    if (s.symlinkTo !== undefined) args.push('--symlink', s.symlinkTo, s.path)
    else args.push('--ro-bind', s.path, s.path)
  }
  for (const m of p.masked) {
    checkPath(m, 'masked file')
    args.push('--ro-bind', '/dev/null', m)
  }
  for (const o of p.overlays ?? []) {
    checkPath(o.source, 'overlay source')
    checkPath(o.dest, 'overlay')
    args.push('--ro-bind', o.source, o.dest)
  }
  args.push('--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp')
  const mounts = new Map<string, 'ro' | 'rw'>()
  for (const r of p.readable) mounts.set(r, 'ro')
  for (const w of [...p.writable, ...(p.workdir ? [p.workdir] : []), p.home]) mounts.set(w, 'rw')
  const ordered = [...mounts.entries()].sort((a, b) => depth(a[0]) - depth(b[0]) || a[0].localeCompare(b[0]))
  for (const [path, mode] of ordered) {
    checkPath(path, mode === 'ro' ? 'readable path' : 'writable path')
    if (mode === 'ro') args.push('--ro-bind-try', path, path)
    else args.push('--bind', path, path)
  }
  args.push('--chdir', p.workdir ?? p.home, '--unshare-pid', '--unshare-ipc')
  if (p.network === 'isolated') args.push('--unshare-net')
  if (p.uid !== undefined) {
    if (!Number.isInteger(p.uid) || p.uid < 1 || p.uid > 65533) throw new Error(`sandbox uid ${p.uid} must be a whole number from 1 to 65533`)
    args.push('--unshare-user', '--uid', String(p.uid), '--gid', String(p.uid))
  }
  args.push('--die-with-parent', '--cap-drop', 'ALL')
  return args
}

export interface SandboxEnvInput {
  /** The broker's environment: only PATH and LANG are read from it, plus the passthrough names. */
  hostEnv: NodeJS.ProcessEnv
  /** Settings `runtimes.<name>.env_passthrough`. */
  passthrough: string[]
  /** The agent environment (SVC_*), harness env and secrets. */
  agentEnv: Record<string, string>
  home: string
  /** Directory holding the `svc` command, put first on PATH. */
  binDir?: string
}

/**
 * The whole environment of a sandboxed harness (TERM comes from the tmux pane): the basics,
 * the passthrough names, the agent's own, then HOME and TMPDIR, which always point inside.
 */
export function sandboxEnv(i: SandboxEnvInput): Record<string, string> {
  const env: Record<string, string> = {
    PATH: i.hostEnv.PATH || '/usr/local/bin:/usr/bin:/bin',
    LANG: i.hostEnv.LANG || 'C.UTF-8',
  }
  for (const k of i.passthrough) if (i.hostEnv[k] !== undefined) env[k] = i.hostEnv[k] as string
  Object.assign(env, i.agentEnv)
  if (i.binDir) env.PATH = `${i.binDir}:${env.PATH}`
  env.HOME = i.home
  env.TMPDIR = '/tmp'
  return env
}
