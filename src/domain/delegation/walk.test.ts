import {describe, expect, it} from 'vitest'
import {POLICY_V1} from './policy-v1.js'
import {PROVENANCE_REQUIRED, ROLE_SCOPES} from './role-scopes.js'
import {UNRECORDED_DENIAL} from './types.js'
import {decideWalk, reincarnationReRecords, type Chain, type WalkHop} from './walk.js'

const full = [...ROLE_SCOPES.full].sort()
const recorded = (delegate: string, ceiling = full): WalkHop => ({delegate, cls: {kind: 'recorded', ceiling}})
const recognized = (delegate: string, ceiling = [...POLICY_V1.full]): WalkHop => ({delegate, cls: {kind: 'recognized', ceiling}})
const unrecorded = (delegate: string): WalkHop => ({delegate, cls: {kind: 'unrecorded'}})
const unknown = (delegate: string): WalkHop => ({delegate, cls: {kind: 'unknown_version'}})
const malformed = (delegate: string): WalkHop => ({delegate, cls: {kind: 'malformed_ceiling'}})
const chain = (hops: WalkHop[], role = 'full', broken: Chain['broken'] = null): Chain => ({agentId: hops[0]?.delegate ?? 'a', role, hops, broken})

describe('decideWalk', () => {
  // [case, chain, permission, allowed, reason, remediation keys expected]
  const table: Array<[string, Chain, string, boolean, string, boolean]> = [
    ['recorded chain carries the permission', chain([recorded('a'), recorded('p')]), 'secret.use', true, 'chain', false],
    ['recognized (adopted) hop carries it', chain([recorded('a'), recognized('p')]), 'secret.use', true, 'chain', false],
    ['own unrecorded hop denies a provenance permission', chain([unrecorded('a')]), 'secret.use', false, 'ceiling_unrecorded', true],
    ['ancestor unrecorded hop denies it too', chain([recorded('a'), unrecorded('p')]), 'cloud_service_account.assign', false, 'ceiling_unrecorded', true],
    // SPEC "Denial details": a permission no adopted ceiling carries keeps the denial without the keys;
    // agent.identity_token is in no V1 row (rule 4), so adoption can never lift it.
    ['agent.identity_token on an unrecorded hop: denied, without the remediation keys', chain([recorded('a'), unrecorded('p')]), 'agent.identity_token', false, 'ceiling_unrecorded', false],
    ['unrecorded hops allow what needs no provenance', chain([unrecorded('a'), unrecorded('p')]), 'agent.create', true, 'chain', false],
    ['artifact permissions on an unrecorded chain follow the role', chain([unrecorded('a')]), 'artifact.read', true, 'chain', false],
    ['adopted ceilings never carry artifacts: plain denial', chain([recognized('a')]), 'artifact.read', false, 'ceiling_lacks_permission', false],
    ['a recorded ceiling lacking it: plain denial', chain([recorded('a', ['agent.read'])]), 'agent.create', false, 'ceiling_lacks_permission', false],
    ['the role lacks it: plain, even with an unrecorded hop', chain([unrecorded('a')], 'baseline'), 'secret.use', false, 'role_lacks_permission', false],
    ['role none holds nothing', chain([recorded('a')], 'none'), 'agent.read', false, 'role_lacks_permission', false],
    ['an unknown role holds nothing', chain([recorded('a')], 'superuser'), 'agent.read', false, 'role_lacks_permission', false],
    ['an unsupported version denies, plain', chain([unknown('a')]), 'agent.read', false, 'unsupported_provenance_version', false],
    ['unsupported version beside an unrecorded hop: still plain', chain([unknown('a'), unrecorded('p')]), 'secret.use', false, 'unsupported_provenance_version', false],
    ['a malformed row denies, plain', chain([recorded('a'), malformed('p')]), 'agent.read', false, 'malformed_ceiling', false],
    ['ceiling lacks it and a hop is unrecorded: plain', chain([recorded('a', ['agent.read']), unrecorded('p')]), 'secret.use', false, 'ceiling_lacks_permission', false],
    ['a broken chain denies everything', chain([recorded('a')], 'full', 'root_inactive'), 'agent.read', false, 'root_inactive', false],
    ['the backfill sentinel is no root', chain([unrecorded('a')], 'full', 'no_principal_root'), 'agent.read', false, 'no_principal_root', false],
    ['a cycle denies', chain([recorded('a'), recorded('b')], 'full', 'cycle'), 'agent.read', false, 'cycle', false],
    ['too deep denies', chain([recorded('a')], 'full', 'too_deep'), 'agent.read', false, 'too_deep', false],
  ]
  it.each(table)('%s', (_name, c, permission, allowed, reason, keys) => {
    const d = decideWalk(c, permission)
    expect(d.allowed).toBe(allowed)
    expect(d.reason).toBe(reason)
    if (keys) expect(d.details).toEqual(UNRECORDED_DENIAL)
    else expect(d.details).toBeUndefined()
  })

  it('every provenance-requiring permission is denied on a version-0 hop, and only those', () => {
    const c = chain([recorded('a'), unrecorded('p')])
    for (const p of ROLE_SCOPES.full) expect(decideWalk(c, p).allowed, p).toBe(!PROVENANCE_REQUIRED.has(p))
    expect(PROVENANCE_REQUIRED.size).toBe(8)
  })

  it('the remediation keys come with exactly the provenance permissions some adopted ceiling carries', () => {
    const c = chain([recorded('a'), unrecorded('p')])
    const carried = new Set(Object.values(POLICY_V1).flat())
    for (const p of PROVENANCE_REQUIRED) {
      const d = decideWalk(c, p)
      expect(d.allowed, p).toBe(false)
      expect(d.details, p).toEqual(carried.has(p) ? UNRECORDED_DENIAL : undefined)
      // The debug log names the unrecorded hop either way (SPEC Events 6).
      expect(d.unrecordedDelegates, p).toEqual(['p'])
    }
  })

  it('names the unrecorded delegates for the debug log, never in the details', () => {
    const d = decideWalk(chain([unrecorded('a'), recorded('p'), unrecorded('g')]), 'secret.use')
    expect(d.unrecordedDelegates).toEqual(['a', 'g'])
    expect(JSON.stringify(d.details)).not.toMatch(/"(a|g|p)"/)
  })
})

describe('reincarnationReRecords', () => {
  const table: Array<[string, WalkHop[], boolean]> = [
    ['own edge unrecorded', [unrecorded('a'), recorded('p')], true],
    ['an edge above unrecorded, every edge between accepted', [recorded('a'), recognized('p'), unrecorded('g')], true],
    ['an unsupported edge between', [recorded('a'), unknown('p'), unrecorded('g')], false],
    ['nothing unrecorded', [recorded('a'), recognized('p')], false],
    ['no edge at all', [], false],
  ]
  it.each(table)('%s', (_name, hops, expected) => expect(reincarnationReRecords(chain(hops))).toBe(expected))
})
