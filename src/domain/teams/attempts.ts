/**
 * Teams, attempts (CONTRACT.md "Teams"): one task run N times side by side. `attempts: N` in the
 * create body makes `<name>-1` ... `<name>-N` in group `<name>`, harnesses taken in turn from
 * `harnessConfigs` (else `harnessConfig`, else the default), each with the same task and `check`.
 */
import {AppError} from '../../api/app-error.js'
import type {CallContext} from '../authz/context.js'
import type {AgentView} from '../agents/agent-state.js'
import type {CreateAgentInput} from '../agents/create-input.js'

export const MAX_ATTEMPTS = 20

type Service = {
  create(ctx: CallContext, input: CreateAgentInput): Promise<AgentView>
  list(ctx: CallContext, filter: {projectId?: string}): Promise<AgentView[]>
  delete(ctx: CallContext, ref: string, projectRef?: string, opts?: {branch?: boolean}): Promise<unknown>
}

const invalid = (path: string, message: string) => new AppError('validation_error', `${path} ${message}`, {fields: [{path, message}]})

/** The create body's attempt fields, checked before anything is made. */
export function attemptPlan(input: CreateAgentInput): Array<{name: string; harnessConfig?: string}> {
  const n = input.attempts
  if (input.harnessConfigs !== undefined && n === undefined) throw invalid('harnessConfigs', 'needs attempts')
  if (n === undefined) return []
  if (!Number.isInteger(n) || n < 1 || n > MAX_ATTEMPTS) throw invalid('attempts', `must be an integer from 1 to ${MAX_ATTEMPTS}`)
  if (input.harnessConfigs !== undefined && input.harnessConfig !== undefined) throw invalid('harnessConfigs', 'give harnessConfig or harnessConfigs, not both')
  const harnesses = input.harnessConfigs ?? (input.harnessConfig !== undefined ? [input.harnessConfig] : [undefined])
  if (harnesses.length === 0 || harnesses.length > n) throw invalid('harnessConfigs', `must name 1 to attempts (${n}) harness configs`)
  // The last attempt's name is the longest: it must still be an agent name (63 characters).
  if (`${input.name}-${n}`.length > 63) throw invalid('name', `is too long for ${n} attempts (${input.name}-${n} must be at most 63 characters)`)
  return Array.from({length: n}, (_, i) => ({name: `${input.name}-${i + 1}`, harnessConfig: harnesses[i % harnesses.length]}))
}

/**
 * Creates the attempts in turn through the ordinary create (every check, quota and budget
 * applies to each). All or none: names already taken are refused first; if attempt k is still
 * refused (its harness unknown, a quota reached, its broker refused it), the attempts already
 * made are deleted with their branches (which hold nothing yet) and that refusal is answered.
 */
export async function createAttempts(service: Service, ctx: CallContext, input: CreateAgentInput): Promise<{group: string; agents: AgentView[]}> {
  const plan = attemptPlan(input)
  const taken = new Set((await service.list(ctx, {projectId: input.projectId})).map((a) => a.name))
  const clash = plan.find((p) => taken.has(p.name))
  if (clash) throw new AppError('conflict', `an agent named ${clash.name} already exists in this project`)
  const {attempts: _n, harnessConfigs: _h, ...base} = input
  const made: AgentView[] = []
  try {
    for (const p of plan) made.push(await service.create(ctx, {...base, name: p.name, harnessConfig: p.harnessConfig, group: input.name}))
  } catch (err) {
    for (const a of made) await service.delete(ctx, a.id, undefined, {branch: true}).catch(() => {})
    throw err
  }
  return {group: input.name, agents: made}
}
