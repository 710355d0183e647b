import {describe, expect, it} from 'vitest'
import type {EdgeRecord} from '../../store/repositories/delegation-edges.js'
import {classifyEdge, edgeFingerprint, parseCeiling} from './edge-class.js'

const base: EdgeRecord = {
  id: 'e1',
  delegateAgentId: 'a1',
  projectId: 'p1',
  delegator: {kind: 'user', id: 'u1'},
  role: 'full',
  provenanceVersion: 0,
  sourceCredentialKind: null,
  ceiling: null,
  ceilingPolicy: null,
  ceilingProjectId: null,
  active: true,
  deactivationCause: null,
  initiator: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
}
const recorded = {...base, provenanceVersion: 1, sourceCredentialKind: 'session', ceiling: '["project.read","agent.read"]'}
const adopted = {...base, provenanceVersion: 1, sourceCredentialKind: 'system_migration', ceiling: '["project.read"]', ceilingPolicy: 'v1', ceilingProjectId: 'p1'}

describe('edge classes', () => {
  it.each([
    ['a clean version-0 row', base, 'unrecorded'],
    ['a version-0 row with a ceiling', {...base, ceiling: '[]'}, 'malformed_provenance'],
    ['a version-0 row with a source kind', {...base, sourceCredentialKind: 'session'}, 'malformed_provenance'],
    ['a recorded row', recorded, 'recorded'],
    ['an adopted row bound to its project', adopted, 'recognized'],
    ['an adopted row bound to another project', {...adopted, ceilingProjectId: 'p2'}, 'malformed_provenance'],
    ['an adopted row without the policy mark', {...adopted, ceilingPolicy: null}, 'malformed_provenance'],
    ['a recorded row with a policy mark', {...recorded, ceilingPolicy: 'v1'}, 'malformed_provenance'],
    ['version 2', {...recorded, provenanceVersion: 2}, 'unknown_version'],
    ['a negative version', {...recorded, provenanceVersion: -1}, 'unknown_version'],
    ['version 1 without a source kind', {...recorded, sourceCredentialKind: null}, 'malformed_provenance'],
    ['a ceiling that is not JSON', {...recorded, ceiling: 'project.read'}, 'malformed_ceiling'],
    ['a ceiling with an unknown permission', {...recorded, ceiling: '["project.read","root.everything"]'}, 'malformed_ceiling'],
    ['a ceiling with a repeated permission', {...recorded, ceiling: '["project.read","project.read"]'}, 'malformed_ceiling'],
    ['a ceiling that is an object', {...recorded, ceiling: '{"project.read":true}'}, 'malformed_ceiling'],
    ['version 1 without a ceiling', {...recorded, ceiling: null}, 'malformed_ceiling'],
  ])('%s is %s', (_name, edge, kind) => {
    expect(classifyEdge(edge as EdgeRecord).kind).toBe(kind)
  })

  it('parses ceilings sorted', () => {
    expect(parseCeiling('["project.read","agent.read"]')).toEqual(['agent.read', 'project.read'])
    expect(parseCeiling(null)).toBeNull()
  })

  it('fingerprints ignore timestamps and see every meaningful field', () => {
    expect(edgeFingerprint({...base, updatedAt: '2030-01-01 00:00:00'})).toBe(edgeFingerprint(base))
    expect(edgeFingerprint({...base, createdAt: 'garbage'})).toBe(edgeFingerprint(base))
    for (const changed of [{role: 'baseline'}, {active: false}, {delegator: {kind: 'user', id: 'u2'}}, {provenanceVersion: 1}, {projectId: 'p2'}]) {
      expect(edgeFingerprint({...base, ...changed} as EdgeRecord)).not.toBe(edgeFingerprint(base))
    }
  })
})
