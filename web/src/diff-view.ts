import {css, html, type TemplateResult} from 'lit'
import {colour} from './syntax.js'

import type {DiffFileDto as DiffFile} from '../../src/api/dto.js'

export type {DiffFile}

export interface DiffLine {
  kind: 'add' | 'del' | 'ctx' | 'hunk' | 'meta'
  text: string
  old?: number
  new?: number
}

/**
 * Splits a unified patch into its files' lines, keyed by the file's (new) path. Section headers
 * are `diff --git a/<old> b/<new>`; a path git had to quote falls back to the files' order, which
 * is the patch's order too.
 */
export function parsePatch(patch: string, files: DiffFile[]): Map<string, DiffLine[]> {
  const out = new Map<string, DiffLine[]>()
  const sections = patch ? patch.split(/^(?=diff --git )/m).filter((s) => s.startsWith('diff --git ')) : []
  sections.forEach((section, i) => {
    const header = /^diff --git a\/(.*) b\/(.*)$/m.exec(section)
    const path = header && files.some((f) => f.path === header[2]) ? header[2] : files[i]?.path
    if (!path) return
    const lines: DiffLine[] = []
    let o = 0
    let n = 0
    let inHunk = false
    for (const text of section.replace(/\n$/, '').split('\n')) {
      const h = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(text)
      if (h) {
        o = Number(h[1])
        n = Number(h[2])
        inHunk = true
        lines.push({kind: 'hunk', text})
      } else if (!inHunk) {
        // The section header repeats what the file list shows; keep what it adds (renames, modes).
        if (!/^(diff --git |index |--- |\+\+\+ )/.test(text)) lines.push({kind: 'meta', text})
      }
      else if (text.startsWith('+')) lines.push({kind: 'add', text: text.slice(1), new: n++})
      else if (text.startsWith('-')) lines.push({kind: 'del', text: text.slice(1), old: o++})
      else if (text.startsWith('\\')) lines.push({kind: 'meta', text})
      else lines.push({kind: 'ctx', text: text.slice(1), old: o++, new: n++})
    }
    out.set(path, lines)
  })
  return out
}

const sign = {add: '+', del: '-', ctx: ' ', hunk: '', meta: ''}

/** The unified view: old and new line numbers, then the line. */
export function unified(path: string, lines: DiffLine[]): TemplateResult {
  return html`<table class="diff" aria-label=${`Changes to ${path}`}>
    <colgroup><col class="ln" /><col class="ln" /><col /></colgroup>
    <tbody>
      ${lines.map((l) =>
        l.kind === 'hunk' || l.kind === 'meta'
          ? html`<tr class=${l.kind}><td colspan="3">${l.text}</td></tr>`
          : html`<tr class=${l.kind}><td class="ln">${l.old ?? ''}</td><td class="ln">${l.new ?? ''}</td><td class="code">${sign[l.kind]}${colour(l.text, path)}</td></tr>`,
      )}
    </tbody>
  </table>`
}

/** The side-by-side view: deletions on the left paired with the additions that replace them. */
export function sideBySide(path: string, lines: DiffLine[]): TemplateResult {
  const rows: Array<[DiffLine | null, DiffLine | null] | DiffLine> = []
  for (let i = 0; i < lines.length; ) {
    const l = lines[i]
    if (l.kind === 'hunk' || l.kind === 'meta') {
      rows.push(l)
      i++
    } else if (l.kind === 'ctx') {
      rows.push([l, l])
      i++
    } else {
      const dels: DiffLine[] = []
      const adds: DiffLine[] = []
      while (i < lines.length && lines[i].kind === 'del') dels.push(lines[i++])
      while (i < lines.length && lines[i].kind === 'add') adds.push(lines[i++])
      for (let k = 0; k < Math.max(dels.length, adds.length); k++) rows.push([dels[k] ?? null, adds[k] ?? null])
    }
  }
  const cell = (l: DiffLine | null, side: 'old' | 'new') =>
    l ? html`<td class="ln">${l[side]}</td><td class=${`code ${l.kind}`}>${colour(l.text, path)}</td>` : html`<td class="ln"></td><td class="code empty"></td>`
  return html`<table class="diff split" aria-label=${`Changes to ${path}, side by side`}>
    <colgroup><col class="ln" /><col /><col class="ln" /><col /></colgroup>
    <tbody>
      ${rows.map((r) => (Array.isArray(r) ? html`<tr>${cell(r[0], 'old')}${cell(r[1], 'new')}</tr>` : html`<tr class=${r.kind}><td colspan="4">${r.text}</td></tr>`))}
    </tbody>
  </table>`
}

export const diffStyles = css`
  .changes { display: flex; gap: 1rem; align-items: flex-start; }
  .files { min-width: 16rem; max-width: 22rem; max-height: 36rem; overflow: auto; border: 1px solid #dde1e6; border-radius: 4px; }
  .files button { display: flex; gap: .5rem; width: 100%; border: none; border-radius: 0; border-bottom: 1px solid #eef0f2; text-align: left; padding: .25rem .5rem; }
  .files button[aria-current='true'] { background: #eef4fc; }
  .files .path { flex: 1; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; font-family: ui-monospace, monospace; font-size: 12px; }
  .st { font-weight: 700; width: 1ch; } .st-added { color: #1c6a2b; } .st-deleted { color: #8a1c1c; } .st-renamed { color: #6b4bb3; }
  .plus { color: #1c6a2b; } .minus { color: #8a1c1c; }
  .diffs { flex: 1; min-width: 0; }
  table.diff { font: 12px/1.4 ui-monospace, monospace; margin: 0 0 1rem; table-layout: fixed; }
  table.diff td { border: none; padding: 0 .4rem; white-space: pre-wrap; word-break: break-all; }
  table.diff col.ln { width: 3.5rem; }
  table.diff td.ln { color: #8a96a3; text-align: right; user-select: none; }
  table.diff tr.add td.code, table.diff td.code.add { background: #e6f6e9; }
  table.diff tr.del td.code, table.diff td.code.del { background: #fbe9e9; }
  table.diff td.code.empty { background: #f4f6f8; }
  table.diff tr.hunk td { background: #eef4fc; color: #4a5a6a; }
  table.diff tr.meta td { color: #6b7785; }
  .tok-kw { color: #8f2bb3; } .tok-str { color: #a34c00; } .tok-num { color: #005cc5; } .tok-com { color: #6a737d; font-style: italic; }
  h4 { font: 600 13px ui-monospace, monospace; margin: .75rem 0 .25rem; }
`
