import {describe, expect, it} from 'vitest'
import {toTelemetryConfig} from './config.js'
import {filterEvent, REDACTED, sha256Hex, type TelemetryEvent} from './filter.js'

const defaults = toTelemetryConfig({enabled: true}).filter
const ev = (type: string, attributes: TelemetryEvent['attributes'] = {}): TelemetryEvent => ({type, time: 1_700_000_000_000, attributes})
const run = (e: TelemetryEvent, f = defaults, ctx: Partial<Parameters<typeof filterEvent>[2]> = {}) => filterEvent(e, f, {debug: false, random: () => 0.5, ...ctx})

describe('telemetry filter (spec: the telemetry.filter table)', () => {
  it('excludes agent.user.prompt by default and keeps other types', () => {
    expect(run(ev('agent.user.prompt', {prompt: 'secret'}))).toBeNull()
    expect(run(ev('agent.status'))).toMatchObject({type: 'agent.status'})
  })

  it('redacts prompt, user.email, tool_output and tool_input and hashes session_id with SHA-256', () => {
    const out = run(ev('agent.tool', {prompt: 'p', 'user.email': 'a@b.c', tool_output: 'o', tool_input: 'i', session_id: 's-1', phase: 'running', turns: 3}))
    expect(out!.attributes).toEqual({
      prompt: REDACTED,
      'user.email': REDACTED,
      tool_output: REDACTED,
      tool_input: REDACTED,
      // sha256sum of the bytes `s-1`, computed outside this code
      session_id: '6a840baf5d8c3ff241688aeb14546e653774cd5387faf1cb982b0fbbf1fbb810',
      phase: 'running',
      turns: 3,
    })
  })

  it('selects by include list (empty: all) and exclude list, exact names', () => {
    const f = {...defaults, include: ['agent.status', 'agent.user.prompt']}
    expect(run(ev('agent.status'), f)).not.toBeNull()
    expect(run(ev('hub.agent.created'), f)).toBeNull()
    // exclude wins over include
    expect(run(ev('agent.user.prompt'), f)).toBeNull()
    expect(run(ev('agent.user'), {...defaults, exclude: ['agent.user.*']})).not.toBeNull()
  })

  it('samples by the default rate and by per-type rates', () => {
    const f = {...defaults, samplingDefault: 0.25, samplingRates: {'agent.status': 1, 'agent.tool': 0}}
    expect(run(ev('agent.status'), f, {random: () => 0.99})).not.toBeNull()
    expect(run(ev('agent.tool'), f, {random: () => 0})).toBeNull()
    expect(run(ev('other'), f, {random: () => 0.2})).not.toBeNull()
    expect(run(ev('other'), f, {random: () => 0.25})).toBeNull()
    // over many draws the kept share follows the rate
    let seed = 1
    const lcg = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
    const kept = Array.from({length: 4000}, () => run(ev('other'), f, {random: lcg})).filter(Boolean).length
    expect(kept).toBeGreaterThan(800)
    expect(kept).toBeLessThan(1200)
  })

  it('passes everything untouched when the filter is disabled', () => {
    const e = ev('agent.user.prompt', {prompt: 'p', session_id: 's'})
    expect(run(e, {...defaults, enabled: false})).toEqual(e)
  })

  it('in debug mode exports every type unsampled but still redacts and hashes', () => {
    const f = {...defaults, samplingDefault: 0}
    const out = run(ev('agent.user.prompt', {prompt: 'p', session_id: 's'}), f, {debug: true})
    expect(out!.attributes).toEqual({prompt: REDACTED, session_id: sha256Hex('s')})
    expect(run(ev('agent.user.prompt'), {...f, respectDebugMode: false}, {debug: true})).toBeNull()
  })

  it('does not hash or sample a reported event again, but still redacts and selects', () => {
    const hashed = sha256Hex('s')
    const f = {...defaults, samplingDefault: 0}
    expect(run(ev('broker.agent.started', {session_id: hashed, prompt: 'p'}), f, {reported: true})!.attributes).toEqual({session_id: hashed, prompt: REDACTED})
    expect(run(ev('agent.user.prompt'), f, {reported: true})).toBeNull()
  })
})
