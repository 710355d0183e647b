import {describe, expect, it} from 'vitest'
import {detailFor, detailLabel} from './detail-visibility.js'

describe('what another agent reads of an agent detail', () => {
  it('the label: the tool, or Permission: and the tool; nothing of what follows', () => {
    const table: Array<[string, string]> = [
      ['Bash: deploy --token ghp_secret', 'Bash'],
      ['Permission: Bash: deploy --token ghp_secret', 'Permission: Bash'],
      ['Permission: bash', 'Permission: bash'],
      ['mcp__github__create_issue: Bug', 'mcp__github__create_issue'],
      ['run_shell_command: echo two > second.txt', 'run_shell_command'],
      ['TodoWrite', 'TodoWrite'],
      ['Question: which token? ghp_secret', 'Question'],
      // Free text with no tool label: nothing (an agent's own report may say anything).
      ['API Error: Unable to connect (token ghp_secret)', ''],
      ['the harness process ended', ''],
      ['Permission:Bash: x', ''],
      ['', ''],
    ]
    for (const [detail, label] of table) expect(detailLabel(detail), detail).toBe(label)
  })

  it('persons, the agent itself and its parent read it whole; another agent its label; brokers whole', () => {
    const agent = {id: 'w', parentId: 'lead'}
    const d = 'Bash: deploy --token ghp_secret'
    expect(detailFor({kind: 'user', id: 'u'}, agent, d)).toBe(d)
    expect(detailFor({kind: 'agent', id: 'w'}, agent, d)).toBe(d)
    expect(detailFor({kind: 'agent', id: 'lead'}, agent, d)).toBe(d)
    expect(detailFor({kind: 'agent', id: 'sibling'}, agent, d)).toBe('Bash')
    expect(detailFor({kind: 'agent', id: 'lead'}, {id: 'w', parentId: null}, d)).toBe('Bash')
    expect(detailFor({kind: 'broker', id: 'b'}, agent, d)).toBe(d)
  })
})
