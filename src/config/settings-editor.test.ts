import {readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {parse} from 'yaml'
import {describe, expect, it} from 'vitest'
import {AppError} from '../api/app-error.js'
import {editSettingsText, type SettingsEdit} from './settings-editor.js'

const FIXTURES = fileURLToPath(new URL('../../test/fixtures/settings/', import.meta.url))
const base = readFileSync(FIXTURES + 'base.yaml', 'utf8')

/**
 * Lines of `before` that are not in `changed` (1-based line numbers of the edited keys) must
 * appear in `after`, in order and byte-identical.
 */
function untouchedLinesSurvive(before: string, after: string, changed: number[]) {
  const afterLines = after.split('\n')
  let j = 0
  before.split('\n').forEach((line, i) => {
    if (changed.includes(i + 1)) return
    while (j < afterLines.length && afterLines[j] !== line) j++
    expect(j, `line ${i + 1} ${JSON.stringify(line)} is missing or out of order`).toBeLessThan(afterLines.length)
    j++
  })
}

const golden: Array<{name: string; edits: SettingsEdit[]; changedLines: number[]}> = [
  {name: 'set-scalar', edits: [{path: ['hub', 'endpoint'], value: 'http://hub.example:9810'}], changedLines: [10]},
  {name: 'set-type-change', edits: [{path: ['hub', 'grove_id'], value: 42}], changedLines: [11]},
  {name: 'unset-key', edits: [{path: ['hub', 'grove_id'], value: null}], changedLines: [11]},
  {name: 'add-key-to-block', edits: [{path: ['runtimes', 'docker', 'gke'], value: true}], changedLines: []},
  {name: 'nested-creation', edits: [{path: ['telemetry', 'cloud', 'tls', 'insecure_skip_verify'], value: true}], changedLines: []},
  {name: 'nested-creation-inside', edits: [{path: ['runtimes', 'local', 'env', 'PATH'], value: '/usr/bin:/bin'}], changedLines: []},
  {name: 'null-removes-block', edits: [{path: ['runtimes', 'docker'], value: null}], changedLines: [18, 19, 20, 21, 22, 23, 24]},
  {name: 'null-removes-top-level-block', edits: [{path: ['x_unknown_block'], value: null}], changedLines: [34, 35, 36, 37]},
  {name: 'explicit-empty-values', edits: [{path: ['default_template'], value: ''}, {path: ['profiles', 'local', 'secrets'], value: []}, {path: ['hub', 'extra'], value: {}}], changedLines: [6]},
  {name: 'flow-mapping', edits: [{path: ['cli', 'interactive_disabled'], value: true}], changedLines: [15]},
  {name: 'last-key-of-block', edits: [{path: ['profiles', 'local', 'runtime'], value: null}, {path: ['profiles', 'local', 'env'], value: null}], changedLines: [29, 30, 31]},
  {name: 'replace-block-with-scalar', edits: [{path: ['x_unknown_block', 'deeper'], value: 'flat'}], changedLines: [36, 37]},
  {name: 'replace-scalar-with-block', edits: [{path: ['x_team_notes'], value: {owner: 'ops', tags: ['a', 'b']}}], changedLines: [33]},
]

describe('editSettingsText golden files', () => {
  it.each(golden)('$name', async ({name, edits, changedLines}) => {
    const out = editSettingsText(base, edits)
    await expect(out).toMatchFileSnapshot(`${FIXTURES}${name}.expected.yaml`)
    untouchedLinesSurvive(base, out, changedLines)
    // Reading back gives what was set, and everything else is unchanged.
    const expected = parse(base)
    for (const e of edits) {
      let cur = expected
      for (const seg of e.path.slice(0, -1)) cur = cur[seg] ??= {}
      if (e.value === null) delete cur[e.path[e.path.length - 1]]
      else cur[e.path[e.path.length - 1]] = e.value
    }
    expect(parse(out)).toEqual(expected)
  })

  it('an edit that changes nothing leaves the text identical', () => {
    expect(editSettingsText(base, [{path: ['hub', 'nope'], value: null}, {path: ['nothing', 'here'], value: null}])).toBe(base)
  })

  it('keeps CRLF line endings', () => {
    const crlf = 'schema_version: "1"\r\nhub:\r\n  endpoint: x\r\n'
    expect(editSettingsText(crlf, [{path: ['hub', 'grove_id'], value: 'g'}])).toBe('schema_version: "1"\r\nhub:\r\n  endpoint: x\r\n  grove_id: g\r\n')
  })

  it('creates sections in an empty or comment-only file', () => {
    expect(editSettingsText('', [{path: ['hub', 'endpoint'], value: 'x'}])).toBe('hub:\n  endpoint: x\n')
    expect(editSettingsText('# just a comment', [{path: ['a'], value: 1}])).toBe('# just a comment\na: 1\n')
  })

  it('follows the file\'s indentation', () => {
    const four = 'hub:\n    endpoint: x\n'
    expect(editSettingsText(four, [{path: ['telemetry', 'cloud', 'enabled'], value: false}])).toBe('hub:\n    endpoint: x\ntelemetry:\n    cloud:\n        enabled: false\n')
  })

  it('quotes strings that would read back as another type', () => {
    const out = editSettingsText(base, [{path: ['hub', 'grove_id'], value: '123'}, {path: ['x_team_notes'], value: 'true'}, {path: ['default_resources', 'cpu'], value: '0.5'}])
    expect(parse(out)).toMatchObject({hub: {grove_id: '123'}, x_team_notes: 'true', default_resources: {cpu: '0.5'}})
  })

  const aliased = `schema_version: "1"
base: &base
  type: docker
  host: x
runtimes:
  docker: *base
  podman:
    <<: *base
    type: podman
  plain:
    type: local
`
  it.each([
    [['runtimes', 'docker', 'host']],
    [['runtimes', 'docker']],
    [['runtimes', 'podman', 'host']],
    [['base', 'host']],
    [['base']],
  ])('refuses an edit on a path with anchors or aliases: %j', (path) => {
    for (const value of ['y', null]) {
      let err: unknown
      try {
        editSettingsText(aliased, [{path, value}])
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(AppError)
      expect(err).toMatchObject({code: 'yaml_alias_on_edited_path', status: 422})
    }
  })

  it('edits elsewhere in a file that uses anchors', () => {
    const out = editSettingsText(aliased, [{path: ['runtimes', 'plain', 'host'], value: 'h'}])
    expect(out).toBe(aliased.replace('    type: local\n', '    type: local\n    host: h\n'))
  })

  it("a key added after a block keeps that block's trailing comment with it, through a later removal (found by the property test)", () => {
    const removed = editSettingsText(base, [{path: ['runtimes', 'local'], value: null}])
    const again = editSettingsText(removed, [{path: ['runtimes', 'local', 'type'], value: 'local'}])
    expect(again).toContain('      EMPTY: ""\n    # trailing comment inside docker\n  local:\n    type: local\n')
    expect(editSettingsText(again, [{path: ['runtimes', 'local'], value: null}])).toBe(removed)
  })

  it('refuses a path through a scalar or a list', () => {
    expect(() => editSettingsText(base, [{path: ['hub', 'grove_id', 'x'], value: 1}])).toThrow(expect.objectContaining({code: 'invalid_request'}))
    expect(() => editSettingsText(base, [{path: ['x_unknown_block', 'nested', '0'], value: 1}])).toThrow(expect.objectContaining({code: 'invalid_request'}))
  })

  it('writes a multi-line or special string into a flow mapping on one line', () => {
    const out = editSettingsText(base, [{path: ['profiles', 'local', 'env', 'B'], value: 'multi\nline'}, {path: ['cli', 'x'], value: 'a, b: {c}'}])
    expect(out).toContain('    env: {A: "1", B: "multi\\nline"}\n')
    expect(out).toContain('cli: {autohelp: true, x: "a, b: {c}"}\n')
    expect(parse(out)).toMatchObject({profiles: {local: {env: {A: '1', B: 'multi\nline'}}}, cli: {autohelp: true, x: 'a, b: {c}'}})
  })

  it('refuses a file that is not valid YAML', () => {
    expect(() => editSettingsText('a: [1\n', [{path: ['a'], value: 1}])).toThrow(expect.objectContaining({code: 'config_invalid'}))
  })
})
