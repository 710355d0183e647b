import type {DiffFileDto as DiffFile} from '../../api/dto.js'

export type {DiffFile}

const STATUS: Record<string, DiffFile['status']> = {A: 'added', M: 'modified', D: 'deleted', R: 'renamed', C: 'copied', T: 'typechange'}

/**
 * Parses `git diff-tree -r -z -M --raw --numstat` output: first the raw records (`:modes oids
 * status` NUL path [NUL path]), then the numstat records (`adds TAB dels TAB path` NUL, or for a
 * rename `adds TAB dels TAB` NUL old NUL new NUL). NUL separation keeps any file name intact.
 */
export function parseRawNumstat(out: string): DiffFile[] {
  const t = out.split('\0')
  const files = new Map<string, DiffFile>()
  let i = 0
  while (i < t.length) {
    const tok = t[i++]
    if (!tok) continue
    if (tok.startsWith(':')) {
      const letter = tok.split(' ')[4]?.[0] ?? 'M'
      const status = STATUS[letter] ?? 'modified'
      if (letter === 'R' || letter === 'C') {
        const oldPath = t[i++]
        const path = t[i++]
        files.set(path, {path, status, additions: 0, deletions: 0, oldPath})
      } else {
        const path = t[i++]
        files.set(path, {path, status, additions: 0, deletions: 0})
      }
      continue
    }
    const [adds, dels, inline] = tok.split('\t')
    let path = inline
    if (!path) {
      i++ // the old path of a rename or copy
      path = t[i++]
    }
    const f = files.get(path)
    if (!f) continue
    if (adds === '-' && dels === '-') f.binary = true
    else {
      f.additions = Number(adds) || 0
      f.deletions = Number(dels) || 0
    }
  }
  return [...files.values()]
}

/**
 * Cuts a patch to at most `maxBytes` at the start of a file's section when one starts in the
 * kept part (so no file is shown half), else at a line end.
 */
export function cutPatch(patch: Buffer, maxBytes: number): Buffer {
  if (patch.length <= maxBytes) return patch
  const head = patch.subarray(0, maxBytes)
  const section = head.lastIndexOf('\ndiff --git ')
  if (section > 0) return head.subarray(0, section + 1)
  const line = head.lastIndexOf('\n')
  return head.subarray(0, line + 1)
}
