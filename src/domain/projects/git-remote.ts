/**
 * Normalises a git remote so one repository has one key however it is spelled:
 * `git@github.com:Org/Repo.git`, `https://user:pw@github.com/Org/Repo/` and
 * `ssh://git@github.com/Org/Repo.git` all become `github.com/Org/Repo`. The host is
 * lower-cased (hosts are case-insensitive); the path keeps its case (some servers care).
 * Returns null for text that is not a remote.
 */
export function normalizeGitRemote(input: string): string | null {
  let s = input.trim()
  if (!s || /\s/.test(s)) return null
  let host: string
  let path: string
  const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/\/)(.+)$/.exec(s)
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(s)) {
    let url: URL
    try {
      url = new URL(s)
    } catch {
      return null
    }
    if (url.protocol === 'file:') {
      host = 'file'
      path = url.pathname
    } else {
      host = url.hostname.toLowerCase() + (url.port ? `:${url.port}` : '')
      path = url.pathname
    }
  } else if (scp) {
    host = scp[1].toLowerCase()
    path = scp[2]
  } else if (s.startsWith('/')) {
    host = 'file'
    path = s
  } else {
    // "github.com/org/repo" without a scheme
    const i = s.indexOf('/')
    if (i <= 0) return null
    host = s.slice(0, i).toLowerCase()
    path = s.slice(i)
  }
  path = path.replace(/\/+$/, '').replace(/\.git$/, '').replace(/^\/+/, '')
  if (!host || !path) return null
  return `${host}/${path}`
}

/** URL-safe slug of a project name: `My Project!` -> `my-project`. */
export function slugify(name: string): string {
  const s = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
  return s || 'project'
}
