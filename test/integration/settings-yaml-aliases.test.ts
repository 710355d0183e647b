import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, expect, it} from 'vitest'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'

/**
 * Issue 22 item 8: YAML aliases away from the edited path never turn a workstation save into a
 * 500, and a billion-laughs block away from it is refused at once with a clear error (the save
 * used to expand it for seconds, then answer 500). Outcomes are asserted, not times: a stall
 * would hit the test's own timeout.
 */
const MANY_ALIASES = `schema_version: "1"
server:
  hub:
    hub_name: Desk
x_shared: &shared {color: blue, size: 3}
x_uses: [${Array.from({length: 150}, () => '*shared').join(', ')}]
`

function billionLaughs(): string {
  const lines = ['schema_version: "1"', 'x_lol:', '  a0: &a0 "lol"']
  for (let i = 1; i <= 9; i++) lines.push(`  a${i}: &a${i} [${Array.from({length: 10}, () => `*a${i - 1}`).join(', ')}]`)
  return lines.join('\n') + '\n'
}

describeEachDialect('settings: YAML aliases away from the edited path', (dialect) => {
  let hub: TestHub | undefined
  afterEach(async () => {
    await hub?.dispose()
    hub = undefined
  })
  const file = () => join(hub!.home, '.svc/settings.yaml')
  const put = (body: unknown) => hub!.request('PUT', '/api/v1/admin/server-config', {body})

  it('a file with 150 aliases elsewhere saves: the edit is written and the aliases stay', async () => {
    hub = await startTestHub(dialect, {files: {'.svc/settings.yaml': MANY_ALIASES}})
    const r = await put({server: {hub: {port: 9911}}})
    expect(r.body.error).toBeUndefined()
    expect(r.status).toBe(200)
    const text = readFileSync(file(), 'utf8')
    expect(text).toContain('port: 9911')
    expect(text).toContain('x_shared: &shared {color: blue, size: 3}')
    expect(text.match(/\*shared/g)).toHaveLength(150)
  })

  it('a billion-laughs block elsewhere: the save is refused with yaml_alias_limit and nothing is written', async () => {
    hub = await startTestHub(dialect)
    const text = billionLaughs()
    // Written after start: the Hub's loader would refuse it at start-up (see below).
    writeFileSync(file(), text)
    const r = await put({server: {hub: {port: 9912}}})
    expect(r.status).toBe(422)
    expect(r.body.error).toMatchObject({code: 'yaml_alias_limit', requestId: r.headers['x-request-id']})
    expect(r.body.error.message).toMatch(/alias/)
    expect(readFileSync(file(), 'utf8')).toBe(text)
    // The Hub still answers.
    expect((await hub.request('GET', '/healthz')).status).toBe(200)
  })

  it('the Hub refuses to start on a billion-laughs file with a config error naming the file', async () => {
    await expect(startTestHub(dialect, {files: {'.svc/settings.yaml': billionLaughs()}})).rejects.toThrow(/settings\.yaml.*alias/s)
  })
})
