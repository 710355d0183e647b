import {readFileSync} from 'node:fs'
import {Parser} from '@oclif/core'
import {describe, expect, it} from 'vitest'
import AgentCreate from '../../commands/agent/create.js'
import {AGENT_CREATE_FLAGS, parseAgentCreate} from './quick-agent-create.js'
import {AGENT_CREATE_USAGE} from './quick-main.js'

// The quick path of `svc agent create` must read argv exactly as oclif reads it, or leave it to oclif.
const oclifFlags = {...AgentCreate.baseFlags, ...AgentCreate.flags} as Record<string, any>

const oclifParse = async (argv: string[]) => {
  const {args, flags} = await Parser.parse(argv, {args: AgentCreate.args, flags: oclifFlags, strict: true})
  const {json, ...rest} = flags as Record<string, unknown>
  return {args: Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined)), flags: rest, json: json === true}
}

describe('the quick parser of svc agent create', () => {
  it('knows every flag of the command as oclif defines it (but --secret, left to oclif)', async () => {
    expect(Object.keys(AGENT_CREATE_FLAGS).sort()).toEqual(Object.keys(oclifFlags).filter((n) => n !== 'secret').sort())
    expect(oclifFlags.secret.multiple).toBe(true)
    for (const [name, spec] of Object.entries(AGENT_CREATE_FLAGS)) {
      const f = oclifFlags[name]
      expect(f.multiple ?? false, name).toBe(false)
      if (spec.type === 'boolean') {
        expect(f.type, name).toBe('boolean')
        continue
      }
      expect(f.type, name).toBe('option')
      // An integer flag refuses a word; a string flag takes it.
      const takesWord = await Promise.resolve(f.parse ? f.parse('word', {}, f) : 'word').then(() => true, () => false)
      expect(takesWord, name).toBe(spec.type === 'string')
      if (spec.type === 'integer') expect({min: f.min, max: f.max}, name).toEqual({min: spec.min, max: spec.max})
      else expect(f.options, name).toEqual(spec.options)
    }
  })

  it('names the command, its arguments and the program as the class and package.json do', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
    expect(AGENT_CREATE_USAGE.bin).toBe(pkg.oclif.bin)
    expect(Object.keys(AGENT_CREATE_USAGE.args)).toEqual(Object.keys(AgentCreate.args))
    for (const [name, a] of Object.entries(AgentCreate.args)) expect(AGENT_CREATE_USAGE.args[name as 'name'].required, name).toBe(a.required ?? false)
  })

  it.each([
    [['fix', 'do it']],
    [['fix', 'do it', '--json']],
    [['--json', 'fix', '--harness', 'claude', 'do it']],
    [['fix', '--harness=claude,codex', '--attempts', '3', '--check', 'npm test', 'x']],
    [['fix', 'task', '--project', 'acme', '--template=t1', '--broker', 'b', '--runtime', 'local', '--role', 'readonly', '--parent', 'lead', '--hub', 'http://h:1']],
    [['fix', 'task', '--max-turns', '5', '--max-model-calls=9', '--max-duration', '2h', '--max-cost', '2.50', '--max-children', '0', '--max-depth', '1']],
    [['fix', 'a=b', '--attempts=20']],
    [['fix', 'a task with --json inside']],
  ])('%j: as oclif reads it', async (argv) => {
    const quick = parseAgentCreate(argv, false)
    expect(quick).not.toBeNull()
    expect(quick).toEqual(await oclifParse(argv))
  })

  it.each([
    [['fix']], // TASK from a stdin that is not a terminal: oclif reads it
    [['fix', 'task', '--secret', 'K=V']],
    [['fix', 'task', '--help']],
    [['fix', 'task', '-h']],
    [['fix', 'task', '--harnes', 'claude']],
    [['fix', 'task', '--harness']],
    [['fix', 'task', '--harness', '--json']],
    [['fix', 'task', '--harness=']],
    [['fix', 'task', '--task', '-x']],
    [['fix', 'task', '--harness', 'a', '--harness', 'b']],
    [['fix', 'task', '--json', '--json']],
    [['fix', 'task', '--json=true']],
    [['fix', 'task', '--attempts', '0']],
    [['fix', 'task', '--attempts', '21']],
    [['fix', 'task', '--attempts', '2x']],
    [['fix', 'task', '--max-depth', '-1']],
    [['fix', 'task', '--role', 'admin']],
    [['fix', 'task', 'extra']],
    [['fix', '--', 'task']],
    [['fix', '-']],
    [['fix', '']],
    [['--toString', 'x', 'y']],
    [[]],
  ])('%j: left to oclif', (argv) => {
    expect(parseAgentCreate(argv, false)).toBeNull()
  })

  it('takes NAME alone when stdin is a terminal (oclif reads no TASK from a terminal)', async () => {
    expect(parseAgentCreate(['demo', '--harness', 'shell'], true)).toEqual({args: {name: 'demo'}, flags: {harness: 'shell'}, json: false})
    // Here stdin is no terminal and empty: oclif reads nothing from it, as from a terminal.
    const argv = ['fix', '--task', 'the task', '--json']
    expect(parseAgentCreate(argv, true)).toEqual(await oclifParse(argv))
  })
})
