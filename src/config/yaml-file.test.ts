import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {SERVER_KEYS} from './schema.js'
import {checkTypes, ConfigError, loadYamlFile, parseYamlText} from './yaml-file.js'

const FILE = '/home/u/.svc/settings.yaml'

function parseError(text: string): ConfigError {
  try {
    parseYamlText(FILE, text)
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return err as ConfigError
  }
  throw new Error('expected a ConfigError')
}

const typeError = (text: string) => checkTypes(parseYamlText(FILE, text), SERVER_KEYS)

describe('parseYamlText: syntax errors', () => {
  it('names the line and column where the parser stopped, and the key it was in', () => {
    const err = parseError('schema_version: "1"\nserver:\n  hub:\n    host: "127.0.0.1\n')
    expect(err.line).toBeGreaterThan(1)
    expect(err.key).toBe('server.hub.host')
    expect(err.message).toMatch(new RegExp(`^${FILE}:${err.line}:${err.column}: server\\.hub\\.host: `))
  })

  it('reports a duplicate key at the duplicate', () => {
    const err = parseError('schema_version: "1"\nimage_registry: a\nimage_registry: b\n')
    expect([err.line, err.column, err.key]).toEqual([3, 1, 'image_registry'])
  })

  it('refuses a file whose top level is not a mapping', () => {
    const err = parseError('- a\n- b\n')
    expect(err.message).toContain('expected a mapping')
  })

  it('treats an empty file as an empty mapping', () => {
    expect(parseYamlText(FILE, '').data).toEqual({})
  })
})

describe('checkTypes: file:line:column, key path, expected vs found', () => {
  it('a string where a whole number is expected', () => {
    const err = typeError('schema_version: "1"\nserver:\n  hub:\n    port: abc\n')
    expect(err?.message).toBe(`${FILE}:4:11: server.hub.port: expected a whole number, found the string "abc"`)
  })

  it('a fraction where a whole number is expected', () => {
    expect(typeError('server:\n  hub:\n    port: 1.5\n')?.message).toBe(`${FILE}:3:11: server.hub.port: expected a whole number, found the number 1.5`)
  })

  it('a string where a boolean is expected', () => {
    expect(typeError('server:\n  auth:\n    dev_mode: "yes"\n')?.message).toBe(`${FILE}:3:15: server.auth.dev_mode: expected true or false, found the string "yes"`)
  })

  it('a mapping where a string is expected', () => {
    expect(typeError('server:\n  mode:\n    a: 1\n')?.message).toBe(`${FILE}:3:5: server.mode: expected a string, found a mapping`)
  })

  it('a scalar where a mapping is expected is reported on the parent key', () => {
    expect(typeError('server: 5\n')?.message).toBe(`${FILE}:1:9: server: expected a mapping, found the number 5`)
  })

  it('a value outside the allowed set', () => {
    expect(typeError('server:\n  database:\n    driver: mysql\n')?.message).toBe(`${FILE}:3:13: server.database.driver: expected one of sqlite, postgres, found "mysql"`)
  })

  it('a list key takes a list or comma-separated text', () => {
    expect(typeError('server:\n  hub:\n    admin_emails: [a@x.io]\n')).toBeNull()
    expect(typeError('server:\n  hub:\n    admin_emails: a@x.io, b@x.io\n')).toBeNull()
    expect(typeError('server:\n  hub:\n    admin_emails: 5\n')?.key).toBe('server.hub.admin_emails')
  })

  it('a null value counts as absent; unknown keys are left alone', () => {
    expect(typeError('server:\n  hub:\n    port:\n  whatever: [1]\nfoo: {bar: 1}\n')).toBeNull()
  })
})

describe('loadYamlFile', () => {
  it('returns null for a missing file and the parsed data otherwise', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-yaml-'))
    expect(loadYamlFile(join(dir, 'none.yaml'))).toBeNull()
    writeFileSync(join(dir, 's.yaml'), 'schema_version: "1"\nserver:\n  hub:\n    port: 1\n')
    const loaded = loadYamlFile(join(dir, 's.yaml'))
    expect(loaded?.data).toEqual({schema_version: '1', server: {hub: {port: 1}}})
    expect(loaded?.file).toBe(join(dir, 's.yaml'))
  })
})
