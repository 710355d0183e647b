import {afterAll, beforeAll, expect, it} from 'vitest'
import {PORT_BLOCK_SIZE, PORT_RANGE} from '../../src/domain/ports/port-blocks.js'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'

const starts = [PORT_RANGE.from, PORT_RANGE.from + PORT_BLOCK_SIZE, PORT_RANGE.from + 2 * PORT_BLOCK_SIZE]
const now = () => new Date().toISOString()

/**
 * Port blocks (migration 0023) on both databases: never the same block for two agents of one
 * broker, even when claimed at once; the same block again for the same agent; released blocks
 * reused; none left: null.
 */
describeEachDialect('agent port blocks', (dialect) => {
  let hub: TestHub
  beforeAll(async () => {
    hub = await startTestHub(dialect)
  })
  afterAll(async () => {
    await hub?.dispose()
  })

  it('claims distinct blocks at once, keeps an agent its block, reuses released ones, and says when none is left', async () => {
    const ports = hub.store.agentPorts
    const claimed = await Promise.all(['a1', 'a2', 'a3'].map((id) => ports.claim(id, 'broker-1', starts, now())))
    expect(new Set(claimed.map((b) => b!.first)).size).toBe(3)
    expect(claimed.every((b) => b && starts.includes(b.first))).toBe(true)
    // Another broker has its own blocks; an agent keeps its block on every claim.
    expect(await ports.claim('b1', 'broker-2', starts, now())).toEqual({brokerId: 'broker-2', first: starts[0]})
    expect(await ports.claim('a2', 'broker-1', starts, now())).toEqual(claimed[1])
    expect(await ports.claim('a4', 'broker-1', starts, now())).toBeNull()
    await ports.release('a2')
    expect(await ports.get('a2')).toBeNull()
    expect(await ports.claim('a4', 'broker-1', starts, now())).toEqual({brokerId: 'broker-1', first: claimed[1]!.first})
  })
})
