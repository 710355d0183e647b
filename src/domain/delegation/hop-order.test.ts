import {expect, it} from 'vitest'
import {sortByAgentId} from './hop-order.js'

it('sorts by agent ID in code-unit order, as the plain sort of the IDs does (empty, one unit, non-ASCII, surrogates)', () => {
  let seed = 5
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
  const units = ['', 'a', 'b', '0', 'z', '\u007f', '\u0080', 'é', '\uffff', '\ud83d\ude00', '-', 'A']
  const ids = new Set<string>(['', 'a', 'é', '\u0080', '\u007f'])
  while (ids.size < 5000) {
    let id = ''
    const len = Math.floor(rand() * 5)
    for (let i = 0; i < len; i++) id += units[Math.floor(rand() * units.length)]
    ids.add(id + (rand() < 0.5 ? crypto.randomUUID() : ''))
  }
  const items = [...ids].map((agentId) => ({agentId}))
  const expected = items.map((h) => h.agentId).sort()
  const sorted = sortByAgentId(items)
  expect(sorted).toBe(items)
  expect(sorted.map((h) => h.agentId)).toEqual(expected)
  // Short lists take the plain comparator sort.
  expect(sortByAgentId(items.slice(0, 100).reverse()).map((h) => h.agentId)).toEqual(expected.slice(0, 100))
})
