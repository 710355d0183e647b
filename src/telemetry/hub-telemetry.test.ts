import pino from 'pino'
import {describe, expect, it} from 'vitest'
import type {CallContext} from '../domain/authz/context.js'
import type {TelemetryEvent} from './filter.js'
import {createHubTelemetry} from './hub-telemetry.js'

/** The Hub's telemetry with a hand-made settings source and the local sink captured in memory. */
async function hubTelemetry(telemetry: Record<string, unknown>, mode: 'workstation' | 'hosted', overrides: Record<string, Record<string, unknown>> = {}) {
  let tree = {telemetry}
  const listeners: Array<() => void> = []
  const lines: string[] = []
  const t = createHubTelemetry({
    settings: {resolved: () => tree, onChange: (fn) => (listeners.push(fn), () => {})},
    mode,
    logger: pino({level: 'silent'}),
    debug: false,
    agentOverride: async (id) => overrides[id] ?? null,
    pipeline: {stderr: {write: (text: string) => lines.push(text)}},
  })
  await t.start()
  const events = async () => {
    await t.flush()
    return lines.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as TelemetryEvent)
  }
  const save = async (next: Record<string, unknown>) => {
    tree = {telemetry: next}
    for (const fn of listeners) fn()
    await t.flush()
  }
  return {t, events, save}
}

const agentCtx = (id: string) => ({principal: {kind: 'agent', id, projectId: 'p'}, credentialKind: 'agent', requestId: 'r'}) as unknown as CallContext
const local = {enabled: true, local: {enabled: true, console: true}}

describe('the Hub\'s telemetry', () => {
  it('accepts reports in hosted mode even with hub reporting off, and not in workstation mode', async () => {
    const off = {...local, hub: {enabled: false}}
    const hosted = await hubTelemetry(off, 'hosted')
    expect(hosted.t.fromAgent(agentCtx('a1'), 'a1', [{type: 'agent.tool'}])).toBe(1)
    expect((await hosted.events()).map((e) => e.type)).toEqual(['agent.tool'])
    const ws = await hubTelemetry(off, 'workstation')
    expect(ws.t.fromAgent(agentCtx('a1'), 'a1', [{type: 'agent.tool'}])).toBe(0)
    expect(await ws.events()).toEqual([])
    await Promise.all([hosted.t.close(), ws.t.close()])
  })

  it('filters an agent\'s events with its override, and follows a save', async () => {
    const h = await hubTelemetry(local, 'workstation', {a1: {filter: {events: {exclude: []}}}})
    h.t.emit({type: 'agent.user.prompt', agentId: 'a1', attributes: {prompt: 'p'}})
    h.t.emit({type: 'agent.user.prompt', agentId: 'a2', attributes: {prompt: 'p'}})
    expect((await h.events()).map((e) => e.attributes['agent.id'])).toEqual(['a1'])
    // A save turning telemetry off stops everything at once.
    await h.save({...local, enabled: false})
    h.t.emit({type: 'agent.status', agentId: 'a1', attributes: {}})
    expect(await h.events()).toHaveLength(1)
    await h.t.close()
  })
})
