import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, expect, it} from 'vitest'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'

const TEXT = 'schema_version: "1"\nserver:\n  hub:\n    hub_name: Desk\n'

/**
 * Issue 22 item 16: a workstation settings save checks the types of what it writes, wherever the
 * key lives (file or database): `active_profile: 0` was written as is. Refused with a clear
 * error naming the key; nothing written anywhere.
 */
describeEachDialect('settings: workstation saves check types', (dialect) => {
  let hub: TestHub | undefined
  afterEach(async () => {
    await hub?.dispose()
    hub = undefined
  })

  it.each([
    ['active_profile', {active_profile: 0}],
    ['active_profile', {active_profile: {name: 'x'}}],
    ['default_model', {default_model: 5}],
  ])('%s with a wrong type is refused, naming the key; nothing is written', async (key, body) => {
    hub = await startTestHub(dialect, {files: {'.svc/settings.yaml': TEXT}})
    const before = (await hub.request('GET', '/api/v1/admin/server-config')).body
    const r = await hub.request('PUT', '/api/v1/admin/server-config', {body})
    expect(r.status).toBeGreaterThanOrEqual(400)
    expect(r.status).toBeLessThan(500)
    expect(JSON.stringify(r.body.error)).toContain(key)
    expect(readFileSync(join(hub.home, '.svc/settings.yaml'), 'utf8')).toBe(TEXT)
    const after = (await hub.request('GET', '/api/v1/admin/server-config')).body
    expect(after[key]).toEqual(before[key])
    expect(after.sections).toEqual(before.sections)
  })
})
