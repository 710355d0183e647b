import {readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import fc from 'fast-check'
import {isMap, isScalar, LineCounter, parse, parseDocument, type Node, type Pair} from 'yaml'
import {describe, expect, it} from 'vitest'
import {editSettingsText, type SettingsEdit} from './settings-editor.js'

const base = readFileSync(fileURLToPath(new URL('../../test/fixtures/settings/base.yaml', import.meta.url)), 'utf8')
const baseLines = base.split('\n')

const EXISTING = [
  'active_profile', 'default_template', 'hub.endpoint', 'hub.grove_id', 'hub.local_only', 'runtimes.docker.type',
  'runtimes.docker.host', 'runtimes.docker.env.FOO', 'runtimes.docker.env.EMPTY', 'runtimes.local.type',
  'profiles.local.runtime', 'profiles.local.env.A', 'x_team_notes', 'x_unknown_block.nested', 'x_unknown_block.deeper.leaf',
]
const NEW = ['hub.new_key', 'telemetry.cloud.endpoint', 'runtimes.docker.env.NEW', 'runtimes.podman.type', 'a.b.c', 'x_unknown_block.deeper.other', 'profiles.local.env.B', 'weird key.with space', 'cli.interactive_disabled', 'cli.new', 'profiles.local.env.x y', 'runtimes.docker.env.a:b #c', "hub.'q'"]
const BLOCKS = ['hub', 'runtimes.docker', 'runtimes.local', 'x_unknown_block', 'profiles.local.env', 'cli']

const tricky = fc.constantFrom('', ' ', 'yes', 'no', 'null', '~', 'true', '0x1F', '1e3', '007', '- a', 'a: b', '#x', 'x #y', "it's", '"q"', '{a}', '[1]', '*alias', '&anchor', 'multi\nline', '\ttab', 'ünï©ødé')
const scalar = fc.oneof(fc.string(), tricky, fc.integer(), fc.boolean(), fc.double({noNaN: true, noDefaultInfinity: true}).filter((d) => !Object.is(d, -0)))
const value = fc.oneof(
  {weight: 4, arbitrary: scalar},
  {weight: 1, arbitrary: fc.constant(null)},
  {weight: 1, arbitrary: fc.array(scalar, {maxLength: 3})},
  {weight: 1, arbitrary: fc.dictionary(fc.stringMatching(/^[a-z_]{1,6}$/), scalar, {maxKeys: 3})},
)
const edit: fc.Arbitrary<SettingsEdit> = fc.oneof(
  fc.record({path: fc.constantFrom(...EXISTING, ...NEW).map((p) => p.split('.')), value}),
  fc.record({path: fc.constantFrom(...BLOCKS).map((p) => p.split('.')), value: fc.constant(null)}),
)

type Tree = Record<string, any>
function applyModel(tree: Tree, e: SettingsEdit) {
  let cur = tree
  for (const seg of e.path.slice(0, -1)) {
    if (typeof cur[seg] !== 'object' || cur[seg] === null || Array.isArray(cur[seg])) {
      if (e.value === null) return
      cur[seg] = {}
    }
    cur = cur[seg]
  }
  if (e.value === null) delete cur[e.path[e.path.length - 1]]
  else cur[e.path[e.path.length - 1]] = e.value
}

/** Lines (1-based) of the original file an edit may change: the edited pair and its ancestors' key lines. */
function touchedLines(path: string[]): number[] {
  const lc = new LineCounter()
  const doc = parseDocument(base, {lineCounter: lc})
  const out: number[] = []
  let node: unknown = doc.contents
  for (const seg of path) {
    if (!isMap(node) || node.flow) {
      // Edits inside a flow mapping rewrite the whole mapping: its lines are the parent's.
      return out
    }
    const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === seg) as Pair<Node, Node> | undefined
    if (!pair) return out
    const from = lc.linePos(pair.key.range![0]).line
    let to = lc.linePos(Math.max(pair.key.range![1], pair.value?.range?.[1] ?? 0) - 1).line
    if (seg === path[path.length - 1]) {
      // A removed pair takes the comment lines indented inside it (its own comments) along.
      const column = lc.linePos(pair.key.range![0]).col - 1
      for (let l = to + 1; l <= baseLines.length; l++) {
        const text = baseLines[l - 1]
        if (text.trim() === '') continue
        const m = /^(\s*)#/.exec(text)
        if (!m || m[1].length <= column) break
        to = l
      }
    }
    out.push(from)
    if (seg === path[path.length - 1] || (isMap(pair.value) && pair.value.flow)) for (let l = from; l <= to; l++) out.push(l)
    node = pair.value
  }
  return out
}

describe('editSettingsText, random edit sequences', () => {
  it('keeps the file valid, untouched text identical, and reads back what was set', () => {
    fc.assert(
      fc.property(fc.array(edit, {minLength: 1, maxLength: 8}), (edits) => {
        const out = editSettingsText(base, edits)
        // Valid YAML.
        const doc = parseDocument(out, {uniqueKeys: true})
        expect(doc.errors).toEqual([])
        // Reading back gives what was set (and nothing else changed).
        const model: Tree = parse(base)
        for (const e of edits) applyModel(model, e)
        expect(doc.toJS() ?? {}).toEqual(model)
        // Every line outside the edited keys survives byte-identical and in order.
        const touched = new Set(edits.flatMap((e) => touchedLines(e.path)))
        const outLines = out.split('\n')
        let j = 0
        baseLines.forEach((line, i) => {
          if (touched.has(i + 1)) return
          while (j < outLines.length && outLines[j] !== line) j++
          expect(j, `line ${i + 1} ${JSON.stringify(line)} lost after ${JSON.stringify(edits)}`).toBeLessThan(outLines.length)
          j++
        })
      }),
      // SVC_PROPERTY_RUNS raises the count for a longer local search.
      {numRuns: Number(process.env.SVC_PROPERTY_RUNS) || 300},
    )
  }, 600_000)
})
