import {describe, expect, it} from 'vitest'
import {POLICY_V1, policyV1Ceiling} from './policy-v1.js'

describe('compatibility policy V1', () => {
  it('is the literal table of the spec, row by row', () => {
    expect(POLICY_V1.readonly).toEqual(['harness_config.list', 'harness_config.read', 'project.read', 'skill.list', 'skill.read', 'template.list', 'template.read'])
    expect(POLICY_V1.baseline).toEqual([...POLICY_V1.readonly, 'agent.notify', 'agent.port_forward', 'agent.status_update', 'agent.token_refresh'].sort())
    expect(POLICY_V1.full).toEqual(
      [
        ...POLICY_V1.baseline,
        'agent.attach',
        'agent.create',
        'agent.delete',
        'agent.lifecycle',
        'agent.set_message_mode',
        'cloud_service_account.assign',
        'project.secret_read',
        'secret.use',
        'template.create',
        'template.update',
        'cloud_service_account.use',
        'env_var.deliver',
        'secret.deliver',
        'skill_injection.deliver',
      ].sort(),
    )
    expect(Object.isFrozen(POLICY_V1) && Object.isFrozen(POLICY_V1.full)).toBe(true)
  })

  it('rule 4: agent.identity_token is in no row', () => {
    for (const row of Object.values(POLICY_V1)) expect(row).not.toContain('agent.identity_token')
  })

  it('rule 2: the lower of the edge role and the applied role picks the row', () => {
    expect(policyV1Ceiling({edgeRole: 'full', appliedRole: 'readonly', assignModeServiceAccount: false, parentCeiling: null})).toEqual(POLICY_V1.readonly)
    expect(policyV1Ceiling({edgeRole: 'baseline', appliedRole: 'full', assignModeServiceAccount: false, parentCeiling: null})).toEqual(POLICY_V1.baseline)
  })

  it('rule 1: an assign-mode service account adds assign and use', () => {
    const c = policyV1Ceiling({edgeRole: 'readonly', appliedRole: 'readonly', assignModeServiceAccount: true, parentCeiling: null})!
    expect(c).toContain('cloud_service_account.assign')
    expect(c).toContain('cloud_service_account.use')
    expect(c.length).toBe(POLICY_V1.readonly.length + 2)
  })

  it("rule 3: an agent delegator's ceiling bounds the hop", () => {
    const c = policyV1Ceiling({edgeRole: 'full', appliedRole: 'full', assignModeServiceAccount: false, parentCeiling: ['project.read', 'agent.create', 'artifact.read']})
    expect(c).toEqual(['agent.create', 'project.read'])
  })

  it('roles outside the table have no V1 ceiling', () => {
    expect(policyV1Ceiling({edgeRole: 'none', appliedRole: 'full', assignModeServiceAccount: false, parentCeiling: null})).toBeNull()
    expect(policyV1Ceiling({edgeRole: 'full', appliedRole: 'superuser', assignModeServiceAccount: false, parentCeiling: null})).toBeNull()
  })
})
