import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {environmentSettings} from './environment-settings.js'

describe("a new agent's workspace settings, read from the settings files at each start", () => {
  let dir: string
  let checkout: string
  let env: NodeJS.ProcessEnv
  const projectFile = () => join(checkout, '.svc', 'settings.yaml')
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-env-settings-'))
    checkout = join(dir, 'checkout')
    mkdirSync(join(checkout, '.svc'), {recursive: true})
    mkdirSync(join(dir, 'home', '.svc'), {recursive: true})
    env = {HOME: join(dir, 'home')}
  })
  afterEach(() => rmSync(dir, {recursive: true, force: true}))

  it('follow every change of a file, however small, its removal, and a file that cannot be read', () => {
    writeFileSync(projectFile(), 'workspace:\n  setup: make a\n')
    expect(environmentSettings(undefined, checkout, env)).toMatchObject({setup: 'make a', copy: []})
    expect(environmentSettings(undefined, checkout, env)).toMatchObject({setup: 'make a'})
    // Same size, other content.
    writeFileSync(projectFile(), 'workspace:\n  setup: make b\n')
    expect(environmentSettings(undefined, checkout, env)).toMatchObject({setup: 'make b'})
    writeFileSync(projectFile(), 'workspace:\n  copy: [".env"]\n')
    const got = environmentSettings(undefined, checkout, env)
    expect(got).toMatchObject({setup: null, copy: ['.env']})
    // What a caller does with its answer is not the next start's.
    got.copy.push('changed')
    expect(environmentSettings(undefined, checkout, env).copy).toEqual(['.env'])
    writeFileSync(projectFile(), 'workspace: [1\n')
    expect(() => environmentSettings(undefined, checkout, env)).toThrow(/cannot be read/)
    rmSync(projectFile())
    writeFileSync(join(dir, 'home', '.svc', 'settings.yaml'), 'workspace:\n  setup: global\n')
    expect(environmentSettings({setup: 'hub'}, checkout, env)).toMatchObject({setup: 'global'})
  })
})
