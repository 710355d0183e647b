import {describe, expect, it} from 'vitest'
import {AppError} from '../../api/app-error.js'
import {applicableDefaults, assignProblems, checkAssign, NO_CLOUD_IAM, type CloudIdentityPolicy} from './cloud-identity.js'

const ACCOUNTS = {
  'hub-ok': {id: 'hub-ok', scope: 'hub', verified: true},
  'hub-unverified': {id: 'hub-unverified', scope: 'hub', verified: false},
  'project-ok': {id: 'project-ok', scope: 'project', verified: true},
} as const
const policy = (mode: string): CloudIdentityPolicy => ({checkMode: () => mode, serviceAccount: (id) => ACCOUNTS[id as keyof typeof ACCOUNTS] ?? null})
const assign = (account?: string) => ({default_cloud_identity_mode: 'Assign', ...(account !== undefined && {default_cloud_identity_service_account_id: account})})

describe('cloud identity: Assign needs a verified hub-scoped service account and cloud_iam_check_mode enforce', () => {
  it.each([
    ['enforce', 'hub-ok', []],
    ['enforce', undefined, [/needs default_cloud_identity_service_account_id/]],
    ['enforce', '', [/needs default_cloud_identity_service_account_id/]],
    ['enforce', 'nobody', [/not registered/]],
    ['enforce', 'hub-unverified', [/not verified/]],
    ['enforce', 'project-ok', [/not hub-scoped/]],
    ['warn', 'hub-ok', [/requires cloud_iam_check_mode: enforce/]],
    ['off', 'nobody', [/requires cloud_iam_check_mode: enforce/, /not registered/]],
  ] as const)('check mode %s, account %s', (mode, account, expected) => {
    const problems = assignProblems(assign(account), policy(mode))
    expect(problems).toHaveLength(expected.length)
    expected.forEach((re, i) => expect(problems[i]).toMatch(re))
  })

  it('checkAssign throws 422 invalid_cloud_identity_mode listing the problems; other modes pass unchecked', () => {
    expect(() => checkAssign(assign('hub-ok'), policy('enforce'))).not.toThrow()
    for (const mode of ['Block', 'Passthrough', null, undefined]) expect(() => checkAssign({default_cloud_identity_mode: mode}, NO_CLOUD_IAM)).not.toThrow()
    try {
      checkAssign(assign('hub-ok'), NO_CLOUD_IAM)
      expect.unreachable()
    } catch (err) {
      expect(err).toBeInstanceOf(AppError)
      expect((err as AppError).code).toBe('invalid_cloud_identity_mode')
      expect((err as AppError).details).toMatchObject({key: 'default_cloud_identity_mode', value: 'Assign', service_account_id: 'hub-ok'})
    }
  })

  it('this Hub (no cloud IAM) never applies a hub Assign: mode and account are dropped from the defaults; others are kept', () => {
    const defaults = {...assign('hub-ok'), default_model: 'm'}
    expect(applicableDefaults(defaults, NO_CLOUD_IAM)).toEqual({default_model: 'm'})
    expect(applicableDefaults(defaults, policy('enforce'))).toBe(defaults)
    const block = {default_cloud_identity_mode: 'Block', default_cloud_identity_service_account_id: 'x'}
    expect(applicableDefaults(block, NO_CLOUD_IAM)).toBe(block)
  })
})
