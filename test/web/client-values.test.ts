import {describe, expect, it} from 'vitest'
import type {LayoutField} from '../../src/api/settings-layout.js'
import {display, parse} from '../../web/src/field-values.js'
import {terminalText} from '../../web/src/terminal-text.js'

const field = (kind: LayoutField['kind']): LayoutField => ({key: 'k', layer: 1, section: 's', kind, doc: '', readOnly: false})

/** The web client's pure helpers: settings values to and from inputs, terminal bytes to text. */
describe('settings field values', () => {
  it('parses what was typed by the field kind; empty clears', () => {
    expect(parse(field('int'), '12')).toBe(12)
    expect(parse(field('float'), '0.5')).toBe(0.5)
    expect(parse(field('string'), 'Team Hub')).toBe('Team Hub')
    expect(parse(field('bool'), true)).toBe(true)
    expect(parse(field('json'), '["a", 1]')).toEqual(['a', 1])
    expect(parse(field('int'), '  ')).toBeNull()
    expect(() => parse(field('int'), '1.5')).toThrow('enter a whole number')
    expect(() => parse(field('float'), 'abc')).toThrow('enter a number')
    expect(() => parse(field('json'), '{oops')).toThrow('enter valid JSON')
  })

  it('shows values as the input text; JSON values indented, absent ones empty', () => {
    expect(display(field('int'), 7)).toBe('7')
    expect(display(field('json'), {a: 1})).toBe('{\n  "a": 1\n}')
    expect(display(field('string'), null)).toBe('')
    expect(display(field('string'), undefined)).toBe('')
  })
})

describe('terminal text', () => {
  it('drops escape sequences and keeps the last version of a line rewritten with carriage returns', () => {
    expect(terminalText('\x1b[1;32mgreen\x1b[0m plain\r\n')).toBe('green plain\n')
    expect(terminalText('\x1b]0;title\x07$ ls\r\n')).toBe('$ ls\n')
    expect(terminalText('10%\r50%\r100%\ndone')).toBe('100%\ndone')
    expect(terminalText('\x1b(B\x1b=a\x07b')).toBe('ab')
  })
})
