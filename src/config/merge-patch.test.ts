import {describe, expect, it} from 'vitest'
import {editSettingsText} from './settings-editor.js'
import {mergeEdits, mergePatch} from './merge-patch.js'

describe('mergePatch (JSON Merge Patch, RFC 7396)', () => {
  it('merges mappings key by key and recursively; null removes only its key; lists and scalars replace', () => {
    const target = {claude: {env: {A: '1'}, args: ['--a', '--b']}, other: {harness: 'codex'}}
    expect(mergePatch(target, {broken: {harness: 'claude'}})).toEqual({...target, broken: {harness: 'claude'}})
    expect(mergePatch(target, {claude: {env: {B: '2'}}})).toEqual({claude: {env: {A: '1', B: '2'}, args: ['--a', '--b']}, other: {harness: 'codex'}})
    expect(mergePatch(target, {claude: {args: ['--c']}})).toEqual({claude: {env: {A: '1'}, args: ['--c']}, other: {harness: 'codex'}})
    expect(mergePatch(target, {other: null})).toEqual({claude: target.claude})
    expect(mergePatch(target, {claude: {env: {A: null}}})).toEqual({claude: {env: {}, args: ['--a', '--b']}, other: {harness: 'codex'}})
    // Nulls inside a mapping that replaces a non-mapping are dropped, never stored.
    expect(mergePatch('x', {a: null, b: {c: null, d: 1}})).toEqual({b: {d: 1}})
    expect(mergePatch(undefined, {})).toEqual({})
    expect(mergePatch(target, 5)).toBe(5)
    // Dotted keys are plain keys.
    expect(mergePatch({'service.name': 'a'}, {'service.version': '1'})).toEqual({'service.name': 'a', 'service.version': '1'})
  })

  it('keeps a key named __proto__ a plain key (no prototype change)', () => {
    const out = mergePatch({a: 1}, JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype)
    expect(Object.keys(out)).toEqual(['a', '__proto__'])
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it('never mutates its arguments', () => {
    const target = {a: {b: 1}}
    const patch = {a: {c: 2}}
    mergePatch(target, patch)
    expect(target).toEqual({a: {b: 1}})
    expect(patch).toEqual({a: {c: 2}})
  })
})

describe('mergeEdits', () => {
  it('edits only the changed leaves of a block, so its other keys and comments stay', () => {
    const text = 'runtimes:\n  dev:  # mine\n    type: local\n    env:\n      A: "1"  # first\n'
    const edits = mergeEdits(['runtimes', 'dev'], {type: 'local', env: {A: '1'}}, {type: 'local', env: {B: '2', A: null}})
    expect(edits).toEqual([{path: ['runtimes', 'dev', 'env', 'B'], value: '2'}, {path: ['runtimes', 'dev', 'env', 'A'], value: null}])
    expect(editSettingsText(text, edits)).toBe('runtimes:\n  dev:  # mine\n    type: local\n    env:\n      B: "2"\n')
    // Nothing there yet: the merged value is written whole.
    expect(mergeEdits(['x'], undefined, {a: {b: null, c: 1}})).toEqual([{path: ['x'], value: {a: {c: 1}}}])
    // A null for a key the block does not hold is no edit.
    expect(mergeEdits(['x'], {a: 1}, {b: null})).toEqual([])
  })
})
