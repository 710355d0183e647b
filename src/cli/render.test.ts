import {describe, expect, it} from 'vitest'
import {fields, table, useColor} from './render.js'

const stream = (isTTY: boolean) => ({isTTY}) as NodeJS.WriteStream

describe('colour (CONTRACT: only on a TTY, never with NO_COLOR)', () => {
  it('is on for a TTY with no NO_COLOR', () => {
    expect(useColor(stream(true), {TERM: 'xterm-256color'})).toBe(true)
  })
  it('is off without a TTY', () => {
    expect(useColor(stream(false), {TERM: 'xterm-256color'})).toBe(false)
  })
  it('is off with NO_COLOR set, whatever its value, and on a dumb terminal', () => {
    expect(useColor(stream(true), {NO_COLOR: ''})).toBe(false)
    expect(useColor(stream(true), {NO_COLOR: '1'})).toBe(false)
    expect(useColor(stream(true), {TERM: 'dumb'})).toBe(false)
  })
  it('a table without colour has no escape codes; with colour only the header is bold', () => {
    const plain = table(['name', 'state'], [['demo', 'running']], false)
    expect(plain).toBe('NAME  STATE\ndemo  running')
    const coloured = table(['name', 'state'], [['demo', 'running']], true)
    expect(coloured.split('\n')[0]).toBe('\u001b[1mNAME  STATE\u001b[22m')
    expect(coloured.split('\n')[1]).toBe('demo  running')
  })
  it('fields align values and show "-" for empty ones', () => {
    expect(fields([['Name', 'demo'], ['Detail', ''], ['ID', null]])).toBe('Name:   demo\nDetail: -\nID:     -')
  })
})
