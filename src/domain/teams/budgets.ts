/**
 * Teams, budgets along the chain (CONTRACT.md "Teams", docs/teams.md "Budgets"). An agent's
 * `limits` bound its whole subtree: its descendants' turns, model calls and cost count toward
 * it. At create the new agent's limits are what was asked for, lowered to the settings that
 * apply to any agent (the request's own maxTurns/maxModelCalls/maxDuration, else the project's
 * annotations, else the Hub's `default_max_*`) and to what every ancestor has left; a create past
 * an ancestor's `maxChildren` or `maxDepth` is refused (429 `budget_exceeded`) inside the create
 * transaction, under the parent's row lock, so two creates cannot both take the last slot.
 */
import {AppError} from '../../api/app-error.js'
import type {AgentLimits} from '../../api/dto.js'
import type {AgentRecord} from '../../store/repositories/agents.js'
import type {Repos} from '../../store/store.js'
import type {Resolved} from '../project-settings/resolve.js'
import {parseDuration} from '../shared/clock.js'

export const LIMIT_KEYS = ['maxTurns', 'maxModelCalls', 'maxDurationSeconds', 'maxCostUsd', 'maxChildren', 'maxDepth'] as const
export type LimitKey = (typeof LIMIT_KEYS)[number]
export type LimitsInput = Partial<Record<LimitKey, number>>

/** Usage limits (what a subtree spends), as opposed to the shape limits (children, depth). */
export const USAGE_KEYS = ['maxTurns', 'maxModelCalls', 'maxCostUsd'] as const

// Far deeper than any team; bounds a walk should records ever point in a circle.
const MAX_WALK = 64
const NONE: AgentLimits = {maxTurns: null, maxModelCalls: null, maxDurationSeconds: null, maxCostUsd: null, maxChildren: null, maxDepth: null}

/** `limits` of a create body: whole numbers (cost: a number), turns/model calls/duration at least 1. */
export function validateLimits(input: unknown): LimitsInput {
  if (input === undefined || input === null) return {}
  const fields: Array<{path: string; message: string}> = []
  if (typeof input !== 'object' || Array.isArray(input)) fields.push({path: 'limits', message: 'must be an object'})
  const out: LimitsInput = {}
  for (const [k, v] of Object.entries(fields.length ? {} : (input as Record<string, unknown>))) {
    if (!(LIMIT_KEYS as readonly string[]).includes(k)) {
      fields.push({path: `limits.${k}`, message: `is not a limit (known: ${LIMIT_KEYS.join(', ')})`})
      continue
    }
    if (v === undefined || v === null) continue
    const min = k === 'maxChildren' || k === 'maxDepth' || k === 'maxCostUsd' ? 0 : 1
    const ok = typeof v === 'number' && Number.isFinite(v) && v >= min && (k === 'maxCostUsd' || Number.isInteger(v))
    if (!ok) fields.push({path: `limits.${k}`, message: k === 'maxCostUsd' ? 'must be a number of USD, 0 or more' : `must be a whole number, ${min} or more`})
    else out[k as LimitKey] = v as number
  }
  if (fields.length) throw new AppError('validation_error', `invalid limits: ${fields.map((f) => `${f.path} ${f.message}`).join('; ')}`, {fields})
  return out
}

const appliedValue = (applied: Record<string, {value?: unknown}> | undefined, field: string) => applied?.[field]?.value

/** Seconds of a settings duration ("45m"), null when it is none or does not parse. */
function durationSeconds(v: unknown): number | null {
  if (typeof v !== 'string') return null
  const ms = parseDuration(v)
  return ms === null ? null : Math.max(1, Math.ceil(ms / 1000))
}
const positive = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : null)

/**
 * An agent's effective limits: as recorded, or, for an agent created before budgets, its own
 * max_turns, max_model_calls and max_duration as applied at its creation.
 */
export function limitsOf(agent: Pick<AgentRecord, 'limits' | 'config'>): AgentLimits {
  if (agent.limits) return {...NONE, ...agent.limits}
  const applied = agent.config.applied as Record<string, {value?: unknown}> | undefined
  return {
    ...NONE,
    maxTurns: positive(appliedValue(applied, 'defaultMaxTurns')),
    maxModelCalls: positive(appliedValue(applied, 'defaultMaxModelCalls')),
    maxDurationSeconds: durationSeconds(appliedValue(applied, 'defaultMaxDuration')),
  }
}

export interface SubtreeUsage {
  agents: number
  turns: number
  modelCalls: number
  costUsd: number
}

/**
 * What `holder` and all its descendants spent. Deleted descendants count: deleting a child does
 * not give its spending back to the chain.
 */
export async function subtreeUsage(repos: Repos, holder: AgentRecord): Promise<{usage: SubtreeUsage; members: AgentRecord[]}> {
  const usage: SubtreeUsage = {agents: 0, turns: 0, modelCalls: 0, costUsd: 0}
  const members: AgentRecord[] = []
  const seen = new Set<string>()
  let level = [holder]
  for (let d = 0; level.length && d < MAX_WALK; d++) {
    for (const a of level) {
      seen.add(a.id)
      members.push(a)
      usage.agents++
      usage.turns += a.turns
      usage.modelCalls += a.usage?.modelCalls ?? 0
      usage.costUsd += a.usage?.costUsd ?? 0
    }
    level = (await repos.agents.list({parentIds: level.map((a) => a.id), includeDeleted: true})).filter((c) => !seen.has(c.id))
  }
  usage.costUsd = Math.round(usage.costUsd * 1e6) / 1e6
  return {usage, members}
}

/** The agent's ancestors, parent first, root last (deleted ones too: their budgets still bind). */
export async function ancestorsOf(repos: Repos, agent: Pick<AgentRecord, 'id' | 'parent'>): Promise<AgentRecord[]> {
  const out: AgentRecord[] = []
  const seen = new Set([agent.id])
  let next = agent.parent?.id
  while (next && !seen.has(next) && out.length < MAX_WALK) {
    const a = await repos.agents.get(next)
    if (!a) break
    out.push(a)
    seen.add(a.id)
    next = a.parent?.id
  }
  return out
}

/** Direct children ever created: deleted ones too, except a create its broker refused (it made nothing). */
async function childrenEverCreated(repos: Repos, parentId: string): Promise<number> {
  const children = await repos.agents.list({parentIds: [parentId], includeDeleted: true})
  return children.filter((c) => !(c.deletedAt && c.runtimeRef === null && c.workspace === null)).length
}

const refuse = (limit: LimitKey, holder: AgentRecord, value: number, message: string) =>
  new AppError('budget_exceeded', message, {limit, agent: {id: holder.id, name: holder.name}, value})

const min = (...vs: Array<number | null | undefined>): number | null => {
  const present = vs.filter((v): v is number => typeof v === 'number')
  return present.length ? Math.min(...present) : null
}

/**
 * Inside the create transaction: refuses a create past `maxChildren` of the parent or `maxDepth`
 * of any ancestor (429 `budget_exceeded`), and answers the new agent's effective limits. `applied`
 * is the settings resolver's answer for the new agent (its own max_* are ceilings).
 */
export async function budgetForNewAgent(tx: Repos, parent: AgentRecord | null, asked: LimitsInput, applied: Record<string, Resolved>, nowMs: number): Promise<AgentLimits> {
  const ceiling = {
    maxTurns: positive(applied.defaultMaxTurns?.value),
    maxModelCalls: positive(applied.defaultMaxModelCalls?.value),
    maxDurationSeconds: durationSeconds(applied.defaultMaxDuration?.value),
  }
  const eff: AgentLimits = {
    maxTurns: min(asked.maxTurns, ceiling.maxTurns),
    maxModelCalls: min(asked.maxModelCalls, ceiling.maxModelCalls),
    maxDurationSeconds: min(asked.maxDurationSeconds, ceiling.maxDurationSeconds),
    maxCostUsd: asked.maxCostUsd ?? null,
    maxChildren: asked.maxChildren ?? null,
    maxDepth: asked.maxDepth ?? null,
  }
  if (!parent) return eff
  // The parent's row lock serialises creates under it (PostgreSQL; SQLite writes one at a time).
  await tx.locks.agent(parent.id)
  const chain = [parent, ...(await ancestorsOf(tx, parent))]
  const parentLimits = limitsOf(parent)
  if (parentLimits.maxChildren !== null) {
    const made = await childrenEverCreated(tx, parent.id)
    if (made >= parentLimits.maxChildren) throw refuse('maxChildren', parent, parentLimits.maxChildren, `agent ${parent.name} has created ${made} children, its limit (limits.maxChildren) is ${parentLimits.maxChildren}`)
  }
  // A fan-out cap passes down as a ceiling (a child may not spawn more widely than its parent).
  eff.maxChildren = min(eff.maxChildren, parentLimits.maxChildren)
  // The highest ancestor whose depth it would pass is named (the one that set the limit; those
  // below it inherited a lowered one).
  for (let i = chain.length - 1; i >= 0; i--) {
    const l = limitsOf(chain[i])
    if (l.maxDepth !== null && i + 1 > l.maxDepth) throw refuse('maxDepth', chain[i], l.maxDepth, `agent ${chain[i].name} allows ${l.maxDepth} generation${l.maxDepth === 1 ? '' : 's'} below it (limits.maxDepth); this agent would be ${i + 1} below`)
  }
  for (const [i, holder] of chain.entries()) {
    const l = limitsOf(holder)
    if (l.maxDepth !== null) eff.maxDepth = min(eff.maxDepth, l.maxDepth - (i + 1))
    if (l.maxDurationSeconds !== null) {
      // Its time runs from its creation: the child gets what is left of it.
      const left = Math.floor((Date.parse(holder.createdAt) + l.maxDurationSeconds * 1000 - nowMs) / 1000)
      eff.maxDurationSeconds = min(eff.maxDurationSeconds, Math.max(1, left))
    }
    if (USAGE_KEYS.some((k) => l[k] !== null)) {
      const {usage} = await subtreeUsage(tx, holder)
      if (l.maxTurns !== null) eff.maxTurns = min(eff.maxTurns, Math.max(0, l.maxTurns - usage.turns))
      if (l.maxModelCalls !== null) eff.maxModelCalls = min(eff.maxModelCalls, Math.max(0, l.maxModelCalls - usage.modelCalls))
      if (l.maxCostUsd !== null) eff.maxCostUsd = min(eff.maxCostUsd, Math.max(0, Math.round((l.maxCostUsd - usage.costUsd) * 1e6) / 1e6))
    }
  }
  return eff
}

/**
 * The applied settings with the effective limits written over the agent's own max_turns,
 * max_model_calls and max_duration (`from: "limits"` where they changed), so the broker stops
 * the agent at its (possibly lowered) duration as it always did.
 */
export function appliedWithLimits(applied: Record<string, Resolved>, l: AgentLimits): Record<string, Resolved | {value: unknown; from: string}> {
  const out: Record<string, Resolved | {value: unknown; from: string}> = {...applied}
  const set = (field: string, value: unknown) => {
    if (value !== null && applied[field]?.value !== value) out[field] = {value, from: 'limits'}
  }
  set('defaultMaxTurns', l.maxTurns)
  set('defaultMaxModelCalls', l.maxModelCalls)
  if (l.maxDurationSeconds !== null && durationSeconds(applied.defaultMaxDuration?.value) !== l.maxDurationSeconds) set('defaultMaxDuration', `${l.maxDurationSeconds}s`)
  return out
}
