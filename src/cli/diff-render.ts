import {spawn} from 'node:child_process'
import type {AgentDiff, DiffFile} from '../client/review-client.js'
import {paint} from './render.js'

const LETTER: Record<string, string> = {added: 'A', modified: 'M', deleted: 'D', renamed: 'R', copied: 'C', typechange: 'T'}

/** `+12 -3` (or `binary`) for one file or a total. */
export const counts = (a: number, d: number, color = false) => `${paint(color).green(`+${a}`)} ${paint(color).red(`-${d}`)}`

export function totals(files: DiffFile[]): {additions: number; deletions: number} {
  return files.reduce((t, f) => ({additions: t.additions + f.additions, deletions: t.deletions + f.deletions}), {additions: 0, deletions: 0})
}

/** One line per file (status letter, path, counts), then the totals: `svc agent diff --stat`. */
export function renderStat(d: AgentDiff, color = false): string {
  if (!d.files.length) return `No changes on ${d.head.branch} since ${d.base.ref} (${d.base.commit.slice(0, 12)}).`
  const width = Math.min(60, Math.max(...d.files.map((f) => (f.oldPath ? `${f.oldPath} -> ${f.path}` : f.path).length)))
  const lines = d.files.map((f) => {
    const name = f.oldPath ? `${f.oldPath} -> ${f.path}` : f.path
    return `${LETTER[f.status] ?? '?'}  ${name.padEnd(width)}  ${f.binary ? 'binary' : counts(f.additions, f.deletions, color)}`
  })
  const t = totals(d.files)
  lines.push(`${d.files.length} file${d.files.length === 1 ? '' : 's'} changed, ${counts(t.additions, t.deletions, color)} (${d.head.branch} against ${d.base.ref} ${d.base.commit.slice(0, 12)})`)
  return lines.join('\n')
}

/** The unified patch, coloured like `git diff` on a terminal. */
export function renderPatch(d: AgentDiff, color = false): string {
  if (!d.files.length) return renderStat(d)
  const c = paint(true)
  const body = color
    ? d.patch
        .split('\n')
        .map((l) => (l.startsWith('diff --git') || l.startsWith('+++') || l.startsWith('---') ? c.bold(l) : l.startsWith('@@') ? c.cyan(l) : l.startsWith('+') ? c.green(l) : l.startsWith('-') ? c.red(l) : l))
        .join('\n')
    : d.patch
  return d.truncated ? `${body}\n[patch truncated: ${d.files.length} files changed; see --stat or --json for the full list]` : body
}

/**
 * Shows text through the user's pager (`$PAGER`, else `less -FRX`: quits when it fits one screen,
 * keeps colours). Split on blanks, never through a shell. Resolves false when no pager runs, so
 * the caller prints the text itself.
 */
export function page(text: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const [cmd, ...args] = (env.SVC_PAGER ?? env.PAGER ?? 'less').split(/\s+/).filter(Boolean)
  if (!cmd || cmd === 'cat') return Promise.resolve(false)
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {stdio: ['pipe', 'inherit', 'inherit'], env: {LESS: 'FRX', ...env}})
    let started = true
    child.on('error', () => {
      started = false
      resolve(false)
    })
    child.on('close', () => started && resolve(true))
    child.stdin.on('error', () => {})
    child.stdin.end(text.endsWith('\n') ? text : `${text}\n`)
  })
}
