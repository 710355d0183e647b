import {mkdirSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {unsetSetting} from './settings-service.js'

/** `svc config unset`: a block goes with its own comments; an emptied block goes too. */
describe('unsetSetting', () => {
  const home = (text: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-unset-'))
    mkdirSync(join(dir, '.svc'))
    writeFileSync(join(dir, '.svc', 'settings.yaml'), text)
    return {ctx: {cwd: dir, env: {HOME: dir}}, read: () => readFileSync(join(dir, '.svc', 'settings.yaml'), 'utf8')}
  }

  it('removing a block removes the comments indented inside it, and keeps the others', async () => {
    const h = home('schema_version: "1"\n# about cli\ncli:\n  autohelp: false # inline\n  # trailing, inside cli\n\n    # deeper still\n# about hub\nhub:\n  endpoint: http://x:1\n  # inside hub\n')
    const r = await unsetSetting('cli', true, h.ctx)
    expect(r.removed).toBe(true)
    expect(h.read()).toBe('schema_version: "1"\n# about cli\n# about hub\nhub:\n  endpoint: http://x:1\n  # inside hub\n')
  })

  it('unsetting the last key of a block removes the empty block (and an emptied parent), not `cli: {}`', async () => {
    const h = home('schema_version: "1"\ncli:\n  autohelp: false\n  # note on autohelp\nhub:\n  endpoint: http://x:1\n')
    await unsetSetting('cli.autohelp', true, h.ctx)
    expect(h.read()).toBe('schema_version: "1"\nhub:\n  endpoint: http://x:1\n')
    const n = home('schema_version: "1"\nruntimes:\n  podman:\n    type: podman\nhub:\n  endpoint: http://x:1\n')
    await unsetSetting('runtimes.podman.type', true, n.ctx)
    expect(n.read()).toBe('schema_version: "1"\nhub:\n  endpoint: http://x:1\n')
  })

  it('a block with other keys left keeps its place', async () => {
    const h = home('schema_version: "1"\ncli:\n  autohelp: false\n  interactive_disabled: true\n')
    await unsetSetting('cli.autohelp', true, h.ctx)
    expect(h.read()).toBe('schema_version: "1"\ncli:\n  interactive_disabled: true\n')
  })
})
