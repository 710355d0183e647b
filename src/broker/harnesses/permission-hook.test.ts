import {describe, expect, it} from 'vitest'
import {claude as claudeHarness} from './claude.js'
import {codex as codexHarness} from './codex.js'
import {hooksJson} from './codex-config.js'
import {approvalWaitSeconds, denyMessage, permissionRequestOutput} from './permission-hook.js'

describe('permission hooks (Claude Code, Codex)', () => {
  it('a PermissionRequest is asked as an approval with the command as its summary; other events are not', () => {
    const payload = {tool_name: 'Bash', tool_input: {command: 'npm test', description: 'run tests'}}
    for (const mod of [claudeHarness, codexHarness]) {
      expect(mod.permissionAsk!('PermissionRequest', payload), mod.type).toEqual({tool: 'Bash', summary: 'npm test', input: {command: 'npm test', description: 'run tests'}})
      expect(mod.permissionAsk!('PreToolUse', payload), mod.type).toBeNull()
    }
  })

  it('answers allow, or deny with the reason the model reads', () => {
    expect(JSON.parse(permissionRequestOutput({behavior: 'allow'}))).toEqual({hookSpecificOutput: {hookEventName: 'PermissionRequest', decision: {behavior: 'allow'}}})
    expect(JSON.parse(claudeHarness.permissionAnswer!('PermissionRequest', {behavior: 'deny', message: denyMessage('not on main', 'the user (through svc)')}))).toEqual({
      hookSpecificOutput: {hookEventName: 'PermissionRequest', decision: {behavior: 'deny', message: 'Denied by the user (through svc): not on main'}},
    })
  })

  it('waits SVC_APPROVAL_WAIT_SECONDS (else 10 minutes); Codex\'s hook timeout leaves a margin', () => {
    expect(approvalWaitSeconds({})).toBe(600)
    expect(approvalWaitSeconds({SVC_APPROVAL_WAIT_SECONDS: '45'})).toBe(45)
    expect(approvalWaitSeconds({SVC_APPROVAL_WAIT_SECONDS: 'x'})).toBe(600)
    const hooks = JSON.parse(hooksJson(['/usr/bin/svc', 'hook', 'codex'], 45)).hooks
    expect(hooks.PermissionRequest[0].hooks[0]).toMatchObject({type: 'command', timeout: 75})
    expect(hooks.PreToolUse[0].hooks[0].timeout).toBeUndefined()
  })
})
