import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {DOCS_BEGIN, DOCS_END, renderSettingsTables} from './docs.js'
import {schemaRows} from './walk.js'

const markdown = readFileSync(new URL('../../../docs/settings.md', import.meta.url), 'utf8')

describe('docs/settings.md', () => {
  it('has the key tables generated from the current schema (run `npm run docs:settings` when this fails)', () => {
    const start = markdown.indexOf(DOCS_BEGIN)
    const end = markdown.indexOf(DOCS_END)
    expect(start, 'generated block markers').toBeGreaterThanOrEqual(0)
    expect(markdown.slice(start, end + DOCS_END.length)).toBe(renderSettingsTables())
  })

  it('documents every key of the schema (a section is the heading of its own table)', () => {
    const tables = renderSettingsTables()
    for (const r of schemaRows()) if (!r.key.includes('.') && !tables.includes(`| \`${r.key}\` |`)) expect(tables).toContain(`### \`${r.key}\``)
    for (const r of schemaRows().filter((x) => x.key.includes('.'))) expect(tables, r.key).toContain(`| \`${r.key}\` |`)
  })
})
