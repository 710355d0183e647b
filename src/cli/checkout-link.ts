/**
 * What `svc project register` links when run in a git checkout: which checkout (if any) gets
 * `hub.grove_id`, and whether its path goes to the Hub as the project's `localPath`.
 */
import {lookup} from 'node:dns/promises'
import {mkdir, readFile, writeFile} from 'node:fs/promises'
import {hostname, networkInterfaces} from 'node:os'
import {isAbsolute, join} from 'node:path'
import {gitRaw} from '../broker/workspace/git.js'
import {normalizeGitRemote} from '../domain/projects/git-remote.js'

export interface CheckoutLink {
  /** The checkout to link (write hub.grove_id), or null. */
  checkout: string | null
  /** Send it as `localPath`: the Hub runs on this machine (only then is the path its too). */
  sendPath: boolean
  /** Why the checkout is not linked although the command runs in one. */
  skipped?: string
}

/** 127.0.0.0/8, ::1 and localhost: a Hub there runs on this machine. */
export function isLoopbackUrl(url: string): boolean {
  let host: string
  try {
    host = new URL(url).hostname.toLowerCase()
  } catch {
    return false
  }
  return host === 'localhost' || host === '[::1]' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host)
}

/**
 * Whether the Hub at `url` runs on this machine: a loopback URL, this machine's host name, or a
 * name or address that resolves to one of this machine's interfaces (a Hub reached at its LAN
 * address from its own machine).
 */
export async function hubOnThisMachine(url: string): Promise<boolean> {
  if (isLoopbackUrl(url)) return true
  let host: string
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase()
  } catch {
    return false
  }
  if (host === hostname().toLowerCase()) return true
  const mine = new Set(Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address)))
  const found = await lookup(host, {all: true}).catch(() => [])
  return found.some((a) => mine.has(a.address))
}

/**
 * The checkout is linked unless `--no-link`, or `--remote` names another repository than the
 * checkout's own `origin` (registering some other project from inside this one must not make
 * this checkout that project's). Its path is sent only to a Hub on this machine (`hubLocal`,
 * hubOnThisMachine): a remote Hub cannot see it and its agents work in clones of the remote.
 */
export function checkoutLink(o: {checkout: string | null; origin: string | null; remoteFlag?: string; noLink: boolean; hubLocal: boolean}): CheckoutLink {
  if (o.noLink || !o.checkout) return {checkout: null, sendPath: false}
  if (o.remoteFlag && o.origin && normalizeGitRemote(o.remoteFlag) !== normalizeGitRemote(o.origin)) {
    return {checkout: null, sendPath: false, skipped: `this checkout's origin is ${o.origin}, not ${o.remoteFlag}`}
  }
  return {checkout: o.checkout, sendPath: o.hubLocal}
}

/** What the link means for where agents work, in one sentence. */
export function linkNote(project: {id: string; localPath?: string | null; gitRemote?: string | null}, link: CheckoutLink, linked: string | null): string {
  const elsewhere = `Use it with --project ${project.id}, SVC_HUB_GROVE_ID, or hub.grove_id in .svc/settings.yaml.`
  if (!linked) return link.skipped ? `Not linked: ${link.skipped}. ${elsewhere}` : elsewhere
  const head = `Linked this checkout (hub.grove_id in ${linked})`
  if (project.localPath && project.localPath === link.checkout) return `${head}: agents created here work in repositories of their own made from it; their branches come back to it when they are merged, pushed or deleted.`
  if (project.localPath) return `${head}: svc commands run here use this project; its agents work in repositories of their own made from ${project.localPath}, the checkout it was registered with.`
  if (!project.gitRemote) return `${head}: svc commands run here use this project. The Hub is not on this machine and the project has no remote, so its agents start in an empty directory: register it with --remote to give them a clone.`
  return `${head}: svc commands run here use this project; the Hub is not on this machine, so its agents work in clones of the project's remote.`
}

/** The line `excludeLinkFile` adds: the checkout's link file, anchored at its top. */
export const SVC_EXCLUDE = '/.svc/settings.yaml'

const git = async (checkout: string, args: string[]) => {
  const r = await gitRaw(args, {cwd: checkout, timeoutMs: 10_000})
  return {code: r.code, out: r.stdout.toString().trim()}
}

/**
 * Keeps the link (`<checkout>/.svc/settings.yaml`, which holds this user's `hub.grove_id`) out of
 * `git status`: adds `/.svc/settings.yaml` to `<git-common-dir>/info/exclude`, the repository's
 * own ignore list, never `.gitignore` (the user's, and committed). The common directory, so one
 * line serves every worktree of the repository. Only the settings file, not all of `.svc/`: a
 * project commits `.svc/setup` (docs/environments), and a new one must still show in `git
 * status`. Nothing is written when git already ignores the file (by any rule: idempotent) or
 * tracks it (the project committed it; an exclude would not hide a change). Answers the exclude
 * file when it was written, else null.
 */
export async function excludeLinkFile(checkout: string): Promise<string | null> {
  const rel = SVC_EXCLUDE.slice(1)
  if ((await git(checkout, ['ls-files', '--error-unmatch', '--', rel])).code === 0) return null
  if ((await git(checkout, ['check-ignore', '-q', '--', rel])).code === 0) return null
  const dir = (await git(checkout, ['rev-parse', '--git-common-dir'])).out
  if (!dir) throw new Error(`not a git checkout: ${checkout}`)
  const file = join(isAbsolute(dir) ? dir : join(checkout, dir), 'info', 'exclude')
  const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return ''
    throw err
  })
  await mkdir(join(file, '..'), {recursive: true})
  const sep = text === '' || text.endsWith('\n') ? '' : '\n'
  await writeFile(file, `${text}${sep}# svc project register: this checkout's link to its svc project\n${SVC_EXCLUDE}\n`)
  return file
}
