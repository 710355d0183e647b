import {describe, expect, it} from 'vitest'
import type {LayoutField} from '../../src/api/settings-layout.js'
import {display, parse} from '../../web/src/field-values.js'

const field = (kind: LayoutField['kind']): LayoutField => ({key: 'k', layer: 1, section: 's', kind, doc: '', readOnly: false})

/** The web client's pure helpers: settings values to and from inputs. */
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
