import {describe, expect, it} from 'vitest'
import {ATTACH_ACTIONS, decideAttachReach, type AgentLineage, type AttachAction} from './attach-authority.js'
import type {Principal} from './context.js'

const P = 'project-p'
const Q = 'project-q'

const agent = (id: string, projectId = P): Principal => ({kind: 'agent', id, projectId})
const user: Principal = {kind: 'user', id: 'u1', email: 'u1@x.io', displayName: 'U1', systemAdmin: false}
const admin: Principal = {...user, id: 'root', systemAdmin: true}
const broker: Principal = {kind: 'broker', id: 'b1'}

// A team of project P: root -> child -> grandchild; sibling made by root too; stranger made by a user.
const target = (id: string, ancestors: string[], projectId = P): AgentLineage => ({id, projectId, ancestors})
const ROOT = target('root-agent', [])
const CHILD = target('child', ['root-agent'])
const GRANDCHILD = target('grandchild', ['child', 'root-agent'])
const SIBLING = target('sibling', ['root-agent'])
const STRANGER = target('stranger', [])
const FOREIGN = target('foreign', ['root-agent'], Q)

interface Row {
  who: string
  principal: Principal
  target: AgentLineage
  allowed: boolean
  reason: string
}

// principal x target x expected; every row is checked for every action (keys, attach, logs).
const TABLE: Row[] = [
  {who: 'an agent on itself', principal: agent('child'), target: CHILD, allowed: true, reason: 'self'},
  {who: 'a parent on its child', principal: agent('root-agent'), target: CHILD, allowed: true, reason: 'descendant'},
  {who: 'a grandparent on its grandchild', principal: agent('root-agent'), target: GRANDCHILD, allowed: true, reason: 'descendant'},
  {who: 'a child on its parent', principal: agent('child'), target: ROOT, allowed: false, reason: 'not_descendant'},
  {who: 'a grandchild on its grandparent', principal: agent('grandchild'), target: ROOT, allowed: false, reason: 'not_descendant'},
  {who: 'an agent on its sibling', principal: agent('child'), target: SIBLING, allowed: false, reason: 'not_descendant'},
  {who: 'an agent on its nephew', principal: agent('sibling'), target: GRANDCHILD, allowed: false, reason: 'not_descendant'},
  {who: 'an agent on an unrelated agent of its project', principal: agent('child'), target: STRANGER, allowed: false, reason: 'not_descendant'},
  {who: 'a root agent on an unrelated agent of its project', principal: agent('root-agent'), target: STRANGER, allowed: false, reason: 'not_descendant'},
  {who: 'an agent on its descendant moved to another project', principal: agent('root-agent'), target: FOREIGN, allowed: false, reason: 'other_project'},
  {who: 'an agent of another project with the same ID as an ancestor', principal: agent('root-agent', Q), target: CHILD, allowed: false, reason: 'other_project'},
  {who: 'a user', principal: user, target: STRANGER, allowed: true, reason: 'not_an_agent'},
  {who: 'a system admin', principal: admin, target: FOREIGN, allowed: true, reason: 'not_an_agent'},
  {who: 'a broker', principal: broker, target: CHILD, allowed: true, reason: 'not_an_agent'},
]

const ROWS = TABLE.flatMap((row) => ATTACH_ACTIONS.map((action) => ({...row, action})))

describe('decideAttachReach (principal x action x expected)', () => {
  it.each(ROWS)('$who / $action -> allowed $allowed ($reason)', ({principal, action, target, allowed, reason}) => {
    const d = decideAttachReach(principal, action as AttachAction, target)
    expect(d.allowed).toBe(allowed)
    expect(d.reason).toBe(reason)
  })

  it('covers keys, attach and logs', () => {
    expect([...ATTACH_ACTIONS].sort()).toEqual(['attach', 'keys', 'logs'])
  })

  it('a descendant decision says how far down the target is', () => {
    expect(decideAttachReach(agent('root-agent'), 'logs', GRANDCHILD).details).toEqual({depth: 2})
  })
})
