import {mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {findProjectSettings, loadCliSettings} from './cli-settings.js'

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cli-settings-'))
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(dir, rel, '..'), {recursive: true})
    writeFileSync(join(dir, rel), text)
  }
  return dir
}

describe('loadCliSettings', () => {
  it('defaults: autohelp on, prompts allowed, no endpoint, no project', async () => {
    const home = tree({})
    expect(await loadCliSettings(home, {HOME: home})).toMatchObject({autohelp: true, interactiveDisabled: false, hubEndpoint: null, groveId: null, files: []})
  })

  it('reads the global file, then the checkout file (later wins), then the environment', async () => {
    const home = tree({
      '.svc/settings.yaml': 'schema_version: "1"\ncli:\n  autohelp: false\nhub:\n  endpoint: http://global:1\n  grove_id: g\n',
      'work/repo/.svc/settings.yaml': 'schema_version: "1"\ncli:\n  interactive_disabled: true\nhub:\n  grove_id: from-checkout\n',
    })
    const cwd = join(home, 'work', 'repo', 'sub')
    mkdirSync(cwd, {recursive: true})
    const s = await loadCliSettings(cwd, {HOME: home})
    expect(s).toMatchObject({autohelp: false, interactiveDisabled: true, hubEndpoint: 'http://global:1', groveId: 'from-checkout'})
    expect(s.files).toEqual([join(home, '.svc', 'settings.yaml'), join(home, 'work', 'repo', '.svc', 'settings.yaml')])
    const env = await loadCliSettings(cwd, {HOME: home, SVC_CLI_AUTOHELP: 'yes', SVC_HUB_ENDPOINT: 'http://env:2', SVC_HUB_GROVE_ID: 'from-env'})
    expect(env).toMatchObject({autohelp: true, hubEndpoint: 'http://env:2', groveId: 'from-env'})
  })

  it('a file it cannot parse is config_invalid naming file:line:column (not silently skipped)', async () => {
    const home = tree({'.svc/settings.yaml': 'schema_version: "1"\ncli: [unclosed\n'})
    await expect(loadCliSettings(home, {HOME: home})).rejects.toMatchObject({code: 'config_invalid', message: expect.stringContaining(`${join(home, '.svc', 'settings.yaml')}:`), details: {file: join(home, '.svc', 'settings.yaml'), line: expect.any(Number)}})
  })
})

describe('findProjectSettings', () => {
  it('walks up to the nearest .svc/settings.yaml but never takes the global one for a project file', () => {
    const home = tree({'.svc/settings.yaml': 'schema_version: "1"\n', 'a/.svc/settings.yaml': 'schema_version: "1"\n'})
    mkdirSync(join(home, 'a', 'b', 'c'), {recursive: true})
    expect(findProjectSettings(join(home, 'a', 'b', 'c'), {HOME: home})).toBe(join(home, 'a', '.svc', 'settings.yaml'))
    expect(findProjectSettings(home, {HOME: home})).toBeNull()
  })
})
