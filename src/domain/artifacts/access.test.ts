import {describe, expect, it} from 'vitest'
import type {CallContext} from '../authz/context.js'
import type {Permission} from '../authz/permissions.js'
import {decideManage, decidePublish, decideRead, SCOPE_ARTIFACT_READ, SCOPE_ARTIFACT_WRITE, type ArtifactFacts} from './access.js'

const HOME = 'p-home'
const OTHER = 'p-other'

const user = (id: string, opts: {admin?: boolean; bounds?: {projectId: string; permissions: Permission[]}} = {}): CallContext => ({
  principal: {kind: 'user', id, email: `${id}@x.test`, displayName: id, systemAdmin: !!opts.admin},
  credentialKind: opts.bounds ? 'user_access_token' : 'session',
  requestId: 'r',
  ...(opts.bounds && {bounds: {tokenId: 't', projectId: opts.bounds.projectId, permissions: new Set(opts.bounds.permissions)}}),
})
const agent = (id: string, projectId: string, scopes: string[] | undefined): CallContext => ({
  principal: {kind: 'agent', id, projectId},
  credentialKind: 'agent',
  requestId: 'r',
  ...(scopes && {scopes: new Set(scopes)}),
})
const broker: CallContext = {principal: {kind: 'broker', id: 'b1'}, credentialKind: 'broker', requestId: 'r'}

const RW = [SCOPE_ARTIFACT_READ, SCOPE_ARTIFACT_WRITE]
const byUser: ArtifactFacts = {ownerKind: 'user', ownerId: 'alice', projectId: HOME, grants: []}
const byAgent: ArtifactFacts = {ownerKind: 'agent', ownerId: 'ag1', projectId: HOME, grants: []}
const shared: ArtifactFacts = {...byUser, grants: [{granteeKind: 'user', granteeId: 'carol'}, {granteeKind: 'project', granteeId: OTHER}]}

describe('decideRead', () => {
  const cases: Array<[string, CallContext, ArtifactFacts, Record<string, 'owner' | 'admin' | 'member' | null>, boolean, string]> = [
    ['owner', user('alice'), byUser, {}, true, 'owner'],
    ['owner who left the home project', user('alice'), byUser, {[HOME]: null}, true, 'owner'],
    ['member of the home project', user('bob'), byUser, {[HOME]: 'member'}, true, 'home_project'],
    ['admin of the home project', user('bob'), byUser, {[HOME]: 'admin'}, true, 'home_project'],
    ['outsider', user('carol'), byUser, {}, false, 'not_a_reader'],
    ['system admin', user('root', {admin: true}), byUser, {}, true, 'home_project'],
    ['user it was shared with', user('carol'), shared, {}, true, 'user_grant'],
    ['member of a project it was shared with', user('dave'), shared, {[OTHER]: 'member'}, true, 'project_grant'],
    ['token of the owner bounded to home with artifact.read', user('alice', {bounds: {projectId: HOME, permissions: ['artifact.read']}}), byUser, {}, true, 'owner'],
    ['token of the owner bounded to another project', user('alice', {bounds: {projectId: OTHER, permissions: ['artifact.read']}}), byUser, {}, false, 'token_project_mismatch'],
    ['token without artifact.read', user('alice', {bounds: {projectId: HOME, permissions: ['project.read']}}), byUser, {}, false, 'token_lacks_permission'],
    ['member token bounded to home', user('bob', {bounds: {projectId: HOME, permissions: ['artifact.read']}}), byUser, {[HOME]: 'member'}, true, 'home_project'],
    ['token bounded to a project it was shared with', user('dave', {bounds: {projectId: OTHER, permissions: ['artifact.read']}}), shared, {[OTHER]: 'member'}, true, 'project_grant'],
    ['token of a user it was shared with, bounded elsewhere', user('carol', {bounds: {projectId: 'p-x', permissions: ['artifact.read']}}), shared, {}, false, 'token_project_mismatch'],
    ['agent of the home project with read scope', agent('ag2', HOME, [SCOPE_ARTIFACT_READ]), byUser, {}, true, 'home_project'],
    ['owning agent', agent('ag1', HOME, [SCOPE_ARTIFACT_READ]), byAgent, {}, true, 'owner'],
    ['agent of the home project without scopes', agent('ag2', HOME, []), byUser, {}, false, 'agent_lacks_scope'],
    ['agent with a token from before artifacts (no scopes at all)', agent('ag1', HOME, undefined), byAgent, {}, false, 'agent_lacks_scope'],
    ['agent of another project', agent('ag3', 'p-x', RW), byUser, {}, false, 'agent_other_project'],
    ['agent of a project it was shared with', agent('ag4', OTHER, [SCOPE_ARTIFACT_READ]), shared, {}, true, 'project_grant'],
    ['agent without read scope, even when shared with its project', agent('ag4', OTHER, [SCOPE_ARTIFACT_WRITE]), shared, {}, false, 'agent_lacks_scope'],
    ['broker', broker, byUser, {}, false, 'principal_not_allowed'],
  ]
  it.each(cases)('%s', (_name, ctx, facts, roles, allowed, reason) => {
    const d = decideRead(ctx, facts, roles)
    expect(d.allowed).toBe(allowed)
    expect(d.reason).toBe(reason)
  })
})

describe('decidePublish', () => {
  const cases: Array<[string, CallContext, string, 'owner' | 'admin' | 'member' | null, boolean, number | undefined]> = [
    ['member', user('bob'), HOME, 'member', true, undefined],
    ['owner', user('bob'), HOME, 'owner', true, undefined],
    ['non-member', user('carol'), HOME, null, false, 403],
    ['system admin', user('root', {admin: true}), HOME, null, true, undefined],
    ['token with artifact.create', user('bob', {bounds: {projectId: HOME, permissions: ['artifact.create']}}), HOME, 'member', true, undefined],
    ['token without artifact.create', user('bob', {bounds: {projectId: HOME, permissions: ['artifact.read']}}), HOME, 'member', false, 403],
    ['token bounded elsewhere', user('bob', {bounds: {projectId: OTHER, permissions: ['artifact.create']}}), HOME, 'member', false, 403],
    ['agent with read and write into its project', agent('ag1', HOME, RW), HOME, null, true, undefined],
    ['agent with read only', agent('ag1', HOME, [SCOPE_ARTIFACT_READ]), HOME, null, false, 403],
    ['agent without read scope: 401', agent('ag1', HOME, [SCOPE_ARTIFACT_WRITE]), HOME, null, false, 401],
    ['agent with no scopes: 401', agent('ag1', HOME, undefined), HOME, null, false, 401],
    ['agent into another project', agent('ag1', HOME, RW), OTHER, null, false, 403],
    ['broker', broker, HOME, null, false, 403],
  ]
  it.each(cases)('%s', (_name, ctx, project, role, allowed, status) => {
    const d = decidePublish(ctx, project, role)
    expect(d.allowed).toBe(allowed)
    expect(d.status).toBe(status)
  })
})

describe('decideManage', () => {
  const cases: Array<[string, CallContext, ArtifactFacts, 'version' | 'delete' | 'share', boolean]> = [
    ['owner versions', user('alice'), byUser, 'version', true],
    ['owner deletes', user('alice'), byUser, 'delete', true],
    ['owner shares', user('alice'), byUser, 'share', true],
    ['member of the home project deletes', user('bob'), byUser, 'delete', false],
    ['system admin who is not the owner shares', user('root', {admin: true}), byUser, 'share', false],
    ['owner token with artifact.create in home', user('alice', {bounds: {projectId: HOME, permissions: ['artifact.create']}}), byUser, 'delete', true],
    ['owner token with only artifact.read', user('alice', {bounds: {projectId: HOME, permissions: ['artifact.read']}}), byUser, 'version', false],
    ['owning agent versions with write scope', agent('ag1', HOME, RW), byAgent, 'version', true],
    ['owning agent versions without write scope', agent('ag1', HOME, [SCOPE_ARTIFACT_READ]), byAgent, 'version', false],
    ['owning agent deletes', agent('ag1', HOME, RW), byAgent, 'delete', false],
    ['owning agent shares', agent('ag1', HOME, RW), byAgent, 'share', false],
    ['another agent versions', agent('ag2', HOME, RW), byAgent, 'version', false],
  ]
  it.each(cases)('%s', (_name, ctx, facts, action, allowed) => {
    expect(decideManage(ctx, facts, action).allowed).toBe(allowed)
  })
})
