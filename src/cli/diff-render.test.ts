import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import type {AgentDiff} from '../client/review-client.js'
import {page, renderPatch, renderStat} from './diff-render.js'

const diff: AgentDiff = {
  base: {ref: 'main', commit: 'a'.repeat(40)},
  head: {branch: 'svc/x', commit: 'b'.repeat(40)},
  files: [
    {path: 'src/a.ts', status: 'modified', additions: 2, deletions: 1},
    {path: 'new-name.ts', status: 'renamed', additions: 0, deletions: 0, oldPath: 'old.ts'},
    {path: 'logo.png', status: 'added', additions: 0, deletions: 0, binary: true},
  ],
  patch: 'diff --git a/src/a.ts b/src/a.ts\n--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1,2 @@\n-old\n+new\n+more\n',
  truncated: false,
}

describe('svc agent diff rendering', () => {
  it('--stat: a line per file (renames and binaries said so) and the totals; plain without colour', () => {
    expect(renderStat(diff)).toBe(
      ['M  src/a.ts               +2 -1', 'R  old.ts -> new-name.ts  +0 -0', 'A  logo.png               binary', '3 files changed, +2 -1 (svc/x against main aaaaaaaaaaaa)'].join('\n'),
    )
    expect(renderStat({...diff, files: []})).toBe('No changes on svc/x since main (aaaaaaaaaaaa).')
  })

  it('the patch is plain when piped and coloured like git on a terminal; a cut patch says so', () => {
    expect(renderPatch(diff)).toBe(diff.patch)
    const coloured = renderPatch(diff, true)
    expect(coloured).toContain('\u001b[32m+new\u001b[39m')
    expect(coloured).toContain('\u001b[31m-old\u001b[39m')
    expect(coloured).toContain('\u001b[36m@@ -1 +1,2 @@\u001b[39m')
    expect(renderPatch({...diff, truncated: true})).toMatch(/\[patch truncated: 3 files changed; see --stat or --json/)
  })

  it('pages through $PAGER split on blanks (no shell); cat or a missing pager means print it yourself', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-pager-'))
    try {
      const out = join(dir, 'paged.txt')
      expect(await page('hello', {PAGER: `tee ${out}`, PATH: process.env.PATH})).toBe(true)
      expect(readFileSync(out, 'utf8')).toBe('hello\n')
      expect(await page('x', {PAGER: 'cat'})).toBe(false)
      expect(await page('x', {PAGER: 'no-such-pager-here', PATH: process.env.PATH})).toBe(false)
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
