import {describe, expect, it} from 'vitest'
import {PROJECT_SETTINGS} from './registry.js'
import {CODED_DEFAULTS, resolveAgentDefaults} from './resolve.js'

// One row per registered setting: a request value, a project annotation (raw), a hub default.
const ROWS: Record<string, {request: unknown; project: string; hub: unknown}> = {
  defaultTemplate: {request: 'req-tpl', project: 'proj-tpl', hub: 'hub-tpl'},
  defaultHarnessConfig: {request: 'req-h', project: 'proj-h', hub: 'hub-h'},
  defaultMaxTurns: {request: 3, project: '7', hub: 11},
  defaultMaxModelCalls: {request: 30, project: '70', hub: 110},
  defaultMaxDuration: {request: '5m', project: '1h', hub: '2h'},
  defaultResources: {request: {cpu: '4'}, project: '{"memory":"8Gi"}', hub: {disk: '50Gi'}},
  defaultModel: {request: 'req-model', project: 'proj-model', hub: 'hub-model'},
  defaultThinkingLevel: {request: 'high', project: 'low', hub: 'medium'},
  defaultAgentRole: {request: 'readonly', project: 'baseline', hub: 'full'},
  defaultTimezone: {request: 'Asia/Tokyo', project: 'Europe/Paris', hub: 'America/New_York'},
  defaultCloudIdentityMode: {request: 'Block', project: 'Assign', hub: 'Passthrough'},
  defaultCloudIdentityServiceAccountId: {request: 'sa-req', project: 'sa-proj', hub: 'sa-hub'},
  defaultRuntimeBroker: {request: 'b-req', project: 'b-proj', hub: 'b-hub'},
}

const layersWith = (which: Array<'request' | 'project' | 'hub'>) => {
  const request: Record<string, unknown> = {}
  const project: Record<string, string> = {}
  const hub: Record<string, unknown> = {}
  for (const def of PROJECT_SETTINGS) {
    const row = ROWS[def.field]
    if (which.includes('request')) request[def.field] = row.request
    if (which.includes('project')) project[def.key] = row.project
    if (which.includes('hub')) hub[def.hubKey] = row.hub
  }
  return {request, project, hub}
}

describe('resolveAgentDefaults: request, then project, then hub, then coded', () => {
  it('covers every registered setting in the table', () => {
    expect(Object.keys(ROWS).sort()).toEqual(PROJECT_SETTINGS.map((d) => d.field).sort())
  })

  for (const def of PROJECT_SETTINGS) {
    if (def.field === 'defaultResources') continue
    const row = ROWS[def.field]
    const projectValue = def.parse(row.project)
    it.each([
      [['request', 'project', 'hub'], row.request, 'request'],
      [['project', 'hub'], projectValue, 'project'],
      [['hub'], row.hub, 'hub'],
      [[], CODED_DEFAULTS[def.field] ?? null, CODED_DEFAULTS[def.field] === undefined ? 'none' : 'coded'],
    ] as const)(`${def.field} with layers %j -> %j from %s`, (which, value, from) => {
      const r = resolveAgentDefaults(layersWith([...which]))
      expect(r[def.field]).toEqual({value, from})
    })
  }

  it('merges resources key by key, nearer layers winning', () => {
    expect(resolveAgentDefaults(layersWith(['request', 'project', 'hub'])).defaultResources).toEqual({
      value: {cpu: '4', memory: '8Gi', disk: '50Gi', gpu: 0},
      from: 'request',
    })
    expect(resolveAgentDefaults(layersWith([])).defaultResources).toEqual({value: {cpu: '1', memory: '2Gi', disk: '10Gi', gpu: 0}, from: 'coded'})
  })

  it('ignores an annotation that no longer parses instead of failing', () => {
    const r = resolveAgentDefaults({request: {}, project: {'svc/default-resources': '{not json'}, hub: {}})
    expect(r.defaultResources.from).toBe('coded')
  })

  it('treats an empty hub value as unset', () => {
    expect(resolveAgentDefaults({request: {}, project: {}, hub: {default_timezone: ''}}).defaultTimezone).toEqual({value: null, from: 'none'})
  })
})
