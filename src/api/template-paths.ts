/**
 * The one rule for a template file's path, checked by the Hub when a template is uploaded and by
 * the broker again when it lays the files out (it trusts nothing it did not check itself).
 */
/** A template path svc writes: relative, no `.`/`..`/empty segment, no `.git` of any case. */
export function templatePathProblem(p: string): string | null {
  if (!p || p.length > 500 || p.startsWith('/') || p.includes('\\') || p.includes('\0')) return 'must be a relative path of at most 500 characters'
  const segs = p.split('/')
  if (segs.some((s) => s === '' || s === '.' || s === '..')) return 'leaves the workspace (empty, "." or ".." segment)'
  if (segs.some((s) => s.toLowerCase() === '.git')) return 'names a .git directory or file, which a template may not write'
  return null
}

