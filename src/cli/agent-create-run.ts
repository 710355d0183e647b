/**
 * What `svc agent create` does once its flags are parsed, without oclif: the command class
 * (commands/agent/create.ts) and the quick path (quick-main.ts) both run this, so a create is
 * the same request, prompt and output whichever parsed its argv.
 */
import {AppError} from '../api/app-error.js'
import {agentsApi, type Agent} from '../client/agents-client.js'
import {agentFields} from './agent-render.js'
import {limitsFromFlags} from './agent-limits-body.js'
import type {CommandContext} from './command-context.js'
import {projectOrDefault} from './project-ref.js'

export type AgentCreateResult = {agent: Agent} | {group: string; agents: Agent[]}

export interface AgentCreateArgs {
  name: string
  task?: string
}

/** The flags as oclif gives them: only those on the command line are set. */
export interface AgentCreateFlags {
  harness?: string
  project?: string
  template?: string
  task?: string
  broker?: string
  runtime?: string
  role?: string
  attempts?: number
  check?: string
  parent?: string
  'max-turns'?: number
  'max-model-calls'?: number
  'max-duration'?: string
  'max-cost'?: string
  'max-children'?: number
  'max-depth'?: number
  secret?: string[]
  hub?: string
}

/** `KEY=VALUE` pairs of --secret. */
function secretFlags(values: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const v of values ?? []) {
    const eq = v.indexOf('=')
    if (eq < 1) throw new AppError('usage_error', `--secret expects KEY=VALUE, not ${JSON.stringify(v.replace(/=.*$/, '=...'))}`)
    out[v.slice(0, eq)] = v.slice(eq + 1)
  }
  return out
}

export async function createAgent(ctx: CommandContext, args: AgentCreateArgs, flags: AgentCreateFlags): Promise<AgentCreateResult> {
  if (args.task !== undefined && flags.task !== undefined) throw new AppError('usage_error', 'give the task once: as the second argument or with --task')
  // With the project and the Hub named by the command (--project; ctx.namedHub), nothing in the
  // settings files changes the request, so they are not read: their YAML parse and checks were
  // the largest part of a create's CPU above Node's own start (~15 ms). A prompt or a usage line
  // still reads them (command-context.ts).
  const projectId = flags.project || projectOrDefault(undefined, await ctx.settings())
  const api = agentsApi(await ctx.client(ctx.namedHub(flags.hub)))
  for (const [key, value] of Object.entries(secretFlags(flags.secret))) await api.putSecret(projectId, key, value, 'user')
  // Attempts: `--harness a,b` is taken in turn (harnessConfigs); the answer lists every attempt.
  const harnesses = flags.attempts !== undefined && flags.harness?.includes(',') ? {harnessConfigs: flags.harness.split(',').map((h) => h.trim())} : {harnessConfig: flags.harness}
  const body = {name: args.name, projectId, ...harnesses, attempts: flags.attempts, check: flags.check, template: flags.template, task: args.task ?? flags.task, brokerId: flags.broker, role: flags.role, runtime: flags.runtime, parentId: flags.parent, limits: limitsFromFlags(flags)}
  let result: AgentCreateResult
  try {
    result = await api.create(body)
  } catch (err) {
    if (!(err instanceof AppError && err.code === 'missing_secrets') || !(await ctx.canPrompt())) throw err
    // The spec's "gathered interactively at agent creation": ask, store as the user's own, retry once.
    const missing = ((err.details?.missing as Array<{key: string; description: string}> | undefined) ?? []).map((m) => ({key: m.key, description: m.description, type: 'environment' as const}))
    const {gatherRequiredSecrets} = await import('../config/required-secrets.js')
    process.stderr.write(`${err.message}\n`)
    for (const s of await gatherRequiredSecrets(missing, {}, {canPrompt: true})) await api.putSecret(projectId, s.key, s.value, 'user')
    result = await api.create(body)
  }
  const failed = ('agents' in result ? result.agents : [result.agent]).find((a) => a.phase === 'error')
  if (failed) throw new AppError('agent_failed', `agent ${failed.name} was created but did not start: ${failed.error ?? 'unknown reason'}`, 'agent' in result ? {agent: failed} : {agent: failed, agents: result.agents})
  return result
}

/** The human answer of a create. */
export function createdText(result: AgentCreateResult): string {
  if ('agents' in result) return result.agents.map((a) => `Agent ${a.name} is ${a.phase}.`).join('\n') + `\nCompare them with: svc agent compare ${result.group}`
  return `Agent ${result.agent.name} is ${result.agent.phase}.\n${agentFields(result.agent)}`
}
