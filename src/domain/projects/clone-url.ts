/**
 * What a broker clones a project from. The Hub finds projects by their normalised remote
 * (git-remote.ts: `github.com/org/repo`), which git cannot clone, so it also keeps the remote as
 * registered, without credentials (they would be shown to every member and stored in clear).
 */

/**
 * The remote as given, minus credentials: an http(s) URL loses its user and password (a token
 * often stands in the user part), any other URL its password; scp-style remotes
 * (`git@host:org/repo`) and paths are kept as they are. `input` must already be a remote
 * (normalizeGitRemote accepted it).
 */
export function cloneUrlOf(input: string): string {
  const s = input.trim()
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(s)) return s
  const url = new URL(s)
  if (url.protocol === 'http:' || url.protocol === 'https:') url.username = ''
  url.password = ''
  return url.toString()
}

/**
 * The URL to clone: the one registered, else (a project registered before svc kept it) one made
 * from the normalised remote: a path for `file/...`, https for a host.
 */
export function cloneSource(project: {gitRemote: string | null; cloneUrl?: string | null}): string | null {
  if (project.cloneUrl) return project.cloneUrl
  if (!project.gitRemote) return null
  return project.gitRemote.startsWith('file/') ? project.gitRemote.slice('file'.length) : `https://${project.gitRemote}`
}
