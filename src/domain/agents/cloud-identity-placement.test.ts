import {describe, expect, it} from 'vitest'
import type {Resolved} from '../project-settings/resolve.js'
import {placeHubCloudIdentity} from './cloud-identity-placement.js'

const brokers = (runtimes: Record<string, string[]>) => ({brokers: {get: async (id: string) => (runtimes[id] ? {runtimes: runtimes[id]} : null)}}) as never
const applied = (mode: Resolved, account: Resolved = {value: null, from: 'none'}) => ({defaultCloudIdentityMode: mode, defaultCloudIdentityServiceAccountId: account})
const UNSET = {value: null, from: 'none'}

describe('cloud identity placement: where a hub default applies', () => {
  it.each([
    ['hub Passthrough on the co-located broker (local runtime): applies', {value: 'Passthrough', from: 'hub'}, 'colo', {colo: ['local']}, {value: 'Passthrough', from: 'hub'}],
    ['hub Passthrough on another broker: left unset', {value: 'Passthrough', from: 'hub'}, 'other', {colo: ['local'], other: ['local']}, UNSET],
    ['hub Passthrough on the co-located broker with a cluster runtime: left unset', {value: 'Passthrough', from: 'hub'}, 'colo', {colo: ['kubernetes']}, UNSET],
    ['project Passthrough on another broker: the project\'s choice, kept', {value: 'Passthrough', from: 'project'}, 'other', {}, {value: 'Passthrough', from: 'project'}],
    ['request Passthrough on another broker: kept', {value: 'Passthrough', from: 'request'}, 'other', {}, {value: 'Passthrough', from: 'request'}],
    ['hub Block anywhere: applies', {value: 'Block', from: 'hub'}, 'other', {}, {value: 'Block', from: 'hub'}],
  ] as const)('%s', async (_name, mode, brokerId, runtimes, expected) => {
    const out = await placeHubCloudIdentity(applied({...mode}), {brokerId, colocatedBrokerId: 'colo', repos: brokers(runtimes as Record<string, string[]>)})
    expect(out.defaultCloudIdentityMode).toEqual(expected)
  })

  it('a hub service account applies only with Assign; a request or project account is kept', async () => {
    const hubAccount = {value: 'sa-1', from: 'hub'} as const
    const repos = brokers({colo: ['local']})
    expect((await placeHubCloudIdentity(applied({value: 'Assign', from: 'hub'}, hubAccount), {brokerId: 'x', colocatedBrokerId: 'colo', repos})).defaultCloudIdentityServiceAccountId).toEqual(hubAccount)
    expect((await placeHubCloudIdentity(applied({value: 'Assign', from: 'request'}, hubAccount), {brokerId: 'x', colocatedBrokerId: 'colo', repos})).defaultCloudIdentityServiceAccountId).toEqual(hubAccount)
    expect((await placeHubCloudIdentity(applied({value: 'Block', from: 'hub'}, hubAccount), {brokerId: 'x', colocatedBrokerId: 'colo', repos})).defaultCloudIdentityServiceAccountId).toEqual(UNSET)
    expect((await placeHubCloudIdentity(applied({value: 'Passthrough', from: 'hub'}, hubAccount), {brokerId: 'x', colocatedBrokerId: 'colo', repos})).defaultCloudIdentityServiceAccountId).toEqual(UNSET)
    const projectAccount = {value: 'sa-2', from: 'project'} as const
    expect((await placeHubCloudIdentity(applied({value: 'Block', from: 'hub'}, projectAccount), {brokerId: 'x', colocatedBrokerId: 'colo', repos})).defaultCloudIdentityServiceAccountId).toEqual(projectAccount)
  })
})
