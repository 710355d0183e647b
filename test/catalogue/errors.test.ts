import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {ERROR_CODES} from '../../src/api/error-codes.js'
import {exitCodeOf} from '../../src/cli/exit-codes.js'
import {AppError} from '../../src/api/app-error.js'

/** Rows of the "## Codes" table of docs/errors.md: code -> status column. */
function documentedCodes(): Map<string, string> {
  const text = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8')
  const section = text.split(/^## Codes$/m)[1]?.split(/^## /m)[0] ?? ''
  const rows = new Map<string, string>()
  for (const m of section.matchAll(/^\| `([a-z0-9_]+)` \| ([^|]+) \|/gm)) rows.set(m[1], m[2].trim())
  return rows
}

describe('the error catalogue and docs/errors.md', () => {
  const documented = documentedCodes()

  it('documents every code of src/api/error-codes.ts, and nothing else', () => {
    expect([...documented.keys()].sort()).toEqual(Object.keys(ERROR_CODES).sort())
  })

  it.each(Object.entries(ERROR_CODES))('%s is documented with its status', (code, info) => {
    expect(documented.get(code)).toBe(info.status === 0 ? 'CLI' : String(info.status))
  })

  it('CLI-only codes carry the exit code their description names', () => {
    for (const [code, info] of Object.entries(ERROR_CODES)) {
      const named = /exit code (\d)/.exec(info.description)
      if (info.status !== 0 || !named) continue
      expect(exitCodeOf(new AppError(code as keyof typeof ERROR_CODES, 'x')), code).toBe(Number(named[1]))
    }
  })

  it('codes are snake_case and statuses are HTTP error statuses (or 0 for CLI-only codes)', () => {
    for (const [code, info] of Object.entries(ERROR_CODES)) {
      expect(code).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/)
      expect(info.status === 0 || (info.status >= 400 && info.status < 600), code).toBe(true)
    }
  })
})
