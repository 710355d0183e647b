import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {defaultStateDir} from './identity.js'

describe('a broker\'s default state directory', () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-identity-'))
  afterEach(() => rmSync(join(home, '.svc'), {recursive: true, force: true}))

  it('is named after the first URL\'s host, unless another given URL\'s directory holds an identity', () => {
    const urls = ['http://hub-a.example:9810', 'http://hub-b.example:9810']
    expect(defaultStateDir(home, urls)).toBe(join(home, '.svc', 'broker-hub-a.example_9810'))
    // The same broker started before with hub-b first: its identity is found, not a new one made.
    mkdirSync(join(home, '.svc', 'broker-hub-b.example_9810'), {recursive: true})
    writeFileSync(join(home, '.svc', 'broker-hub-b.example_9810', 'identity.json'), '{}')
    expect(defaultStateDir(home, urls)).toBe(join(home, '.svc', 'broker-hub-b.example_9810'))
  })
})
