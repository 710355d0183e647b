/**
 * What a broker clones a project from. The Hub finds projects by their normalised remote
 * (git-remote.ts: `github.com/org/repo`), which git cannot clone, so it also keeps the remote as
 * registered, without credentials (they would be shown to every member and stored in clear).
 */

/**
 * The remote as given, minus credentials: an http(s) URL loses its user, password and query (a
 * token often stands in the user part or a `?private_token=`), any other URL its password;
 * scp-style remotes (`git@host:org/repo`) and paths are kept as they are, and a bare
 * `host/org/repo` (which git would take for a local path) becomes https. `input` must already be
 * a remote (normalizeGitRemote accepted it).
 */
export function cloneUrlOf(input: string): string {
  const s = input.trim()
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(s)) return s.startsWith('/') || /^(?:[^@/]+@)?[^:/]+:(?!\/\/)/.test(s) ? s : `https://${s}`
  const url = new URL(s)
  if (url.protocol === 'http:' || url.protocol === 'https:') {
    url.username = ''
    url.search = ''
  }
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
