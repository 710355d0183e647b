import {spawnSync} from 'node:child_process'
import {describe, expect, it} from 'vitest'
import {agentBranch} from './launch.js'

const validRef = (branch: string) => spawnSync('git', ['check-ref-format', `refs/heads/${branch}`]).status === 0

describe('agentBranch', () => {
  it('is svc/<name> for an ordinary name', () => {
    expect(agentBranch('fix-login_2')).toBe('svc/fix-login_2')
    expect(agentBranch('v1.2')).toBe('svc/v1.2')
  })

  it('makes every allowed name a branch git accepts', () => {
    // Names the agent name rule allows but a bare `svc/<name>` would not be a valid ref.
    for (const name of ['a..b', 'a.', 'a...', 'x.lock', 'x.lock.', 'a..lock']) {
      expect(validRef(`svc/${name}`), name).toBe(false)
      const branch = agentBranch(name)
      expect(validRef(branch), `${name} -> ${branch}`).toBe(true)
    }
    expect(agentBranch('x.lock')).toBe('svc/x-lock')
    expect(agentBranch('a..b')).toBe('svc/a.b')
  })
})
