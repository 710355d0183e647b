/**
 * Artifact references (CONTRACT.md): `svc://artifact/<id>`, `svc://artifact/<id>@<seq>` (one
 * version), or a bare `<id>` (also `<id>@<seq>`). Shared by the Hub (answers carry `ref`) and
 * the CLI (which accepts every form).
 */
export interface ArtifactRef {
  id: string
  /** A specific version; absent means the current one. */
  seq?: number
}

const PREFIX = 'svc://artifact/'
const ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/

export function formatArtifactRef(id: string, seq?: number): string {
  return `${PREFIX}${id}${seq === undefined ? '' : `@${seq}`}`
}

/** Parses a reference; null when it is not one. */
export function parseArtifactRef(raw: string): ArtifactRef | null {
  let s = raw.trim()
  if (s.startsWith(PREFIX)) s = s.slice(PREFIX.length)
  else if (s.includes('://')) return null
  const at = s.lastIndexOf('@')
  let seq: number | undefined
  if (at !== -1) {
    const n = s.slice(at + 1)
    if (!/^[1-9][0-9]{0,9}$/.test(n)) return null
    seq = Number(n)
    s = s.slice(0, at)
  }
  if (!ID.test(s)) return null
  return seq === undefined ? {id: s} : {id: s, seq}
}
