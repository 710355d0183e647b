import {AppError} from '../../api/app-error.js'
import type {Repos} from '../../store/store.js'
import type {BrokerGateway} from '../brokers/gateway.js'
import type {AgentSettings} from './agent-settings.js'

/** How long a create waits for a co-located broker that is still starting (detecting its runtime). */
export const COLOCATED_START_WAIT_MS = 15_000

/** Runtime types a broker reports in its hello; any other name is a settings `runtimes` entry. */
const RUNTIME_TYPES = new Set(['local', 'podman', 'docker', 'kubernetes'])

export interface PlacementInput {
  /** `--broker`: wins over everything, or the create fails naming it. */
  requested?: string | null
  /** Preferred when it can take the agent: the parent's broker, else the project's default. */
  projectDefault?: string | null
  /** The runtime asked for (a type such as `podman`, or a settings `runtimes` name). */
  runtime?: string | null
}

/**
 * The broker a new agent goes to (placement): the one asked for; else, among the online brokers
 * that can run it (capability `agents`; those already running an asked-for runtime first), the preferred
 * one (project's default, then the Hub's `default_runtime_broker` or, without one, its
 * co-located broker) when under `max_agents_per_broker`, else the least loaded under the cap
 * (with the cap not enforced, past it: the least loaded of all).
 * 429 `quota_exceeded` when every broker that could run it is at the cap (with
 * `enforce_broker_quotas`), 503 `broker_unavailable` only when none is online. A create that
 * arrives while the co-located broker is still starting (about a second after `/healthz`
 * answers, more with podman installed) waits for it, at most COLOCATED_START_WAIT_MS.
 */
export async function chooseBroker(
  input: PlacementInput,
  settings: AgentSettings,
  gateway: BrokerGateway,
  colocated: string | null | (() => string | null),
  repos: Repos,
  colocatedStarting?: () => Promise<unknown> | null,
): Promise<string> {
  const starting = colocatedStarting?.()
  const id = () => (typeof colocated === 'function' ? colocated() : colocated)
  try {
    return await pickBroker(input, settings, gateway, id(), repos)
  } catch (err) {
    if (!starting || !(err instanceof AppError) || err.code !== 'broker_unavailable' || input.requested) throw err
    await Promise.race([starting.catch(() => {}), new Promise((r) => setTimeout(r, COLOCATED_START_WAIT_MS).unref())])
    return pickBroker(input, settings, gateway, id(), repos)
  }
}

async function pickBroker(input: PlacementInput, settings: AgentSettings, gateway: BrokerGateway, colocatedId: string | null, repos: Repos): Promise<string> {
  if (input.requested) {
    const b = await repos.brokers.get(input.requested)
    if (!b) throw new AppError('not_found', `broker ${input.requested} not found`)
    if (!gateway.isConnected(b.id)) throw new AppError('broker_unavailable', `broker ${b.name} (${b.id}) is not connected`)
    return b.id
  }
  const runtime = input.runtime ?? null
  const online = (await repos.brokers.list()).filter((b) => gateway.isConnected(b.id) && gateway.capabilities(b.id)?.includes('agents'))
  if (!online.length) throw new AppError('broker_unavailable', 'no runtime broker is online to run this agent: start one with `svc broker start`, or pass --broker')
  // A broker's `runtimes` are those it runs now (its default, its agents'), not all it could:
  // any broker builds an asked-for runtime at the start and refuses one its host lacks
  // (runtime_unavailable). Brokers already running it come first; when none does, any may.
  const running = runtime && RUNTIME_TYPES.has(runtime) ? online.filter((b) => b.runtimes.includes(runtime)) : online
  const able = running.length ? running : online
  const load = new Map<string, number>()
  for (const b of able) load.set(b.id, await repos.agents.countActive({brokerId: b.id}))
  const {maxAgentsPerBroker, enforceBrokerQuotas} = settings.quotas
  // Brokers under the cap first; past it, a cap that is not enforced lets the least loaded take more.
  let open = able.filter((b) => load.get(b.id)! < maxAgentsPerBroker)
  if (!open.length && !enforceBrokerQuotas) open = able
  if (!open.length) {
    throw new AppError('quota_exceeded', `every broker that can run this agent runs ${maxAgentsPerBroker} agents, its limit (quotas.max_agents_per_broker)`, {quota: 'max_agents_per_broker', limit: maxAgentsPerBroker})
  }
  for (const preferred of [input.projectDefault, settings.defaultRuntimeBroker ?? colocatedId]) {
    if (preferred && open.some((b) => b.id === preferred)) return preferred
  }
  // Least loaded first; ties go to the older broker, so placement is stable.
  return open.reduce((best, b) => (load.get(b.id)! < load.get(best.id)! ? b : best)).id
}

/**
 * The broker a start or restart dispatches to: the agent's own (an agent never moves, its
 * workspace is there); only an agent never placed is placed now. A broker that is gone is
 * 503 `broker_unavailable` naming it.
 */
export async function brokerOfStart(agent: {name: string; brokerId: string | null; runtime?: string | null}, place: () => Promise<string>, gateway: BrokerGateway, repos: Repos): Promise<string> {
  if (!agent.brokerId) return place()
  if (gateway.isConnected(agent.brokerId)) return agent.brokerId
  const b = await repos.brokers.get(agent.brokerId)
  throw new AppError('broker_unavailable', `agent ${agent.name} runs on broker ${b?.name ?? 'deleted'} (${agent.brokerId}), which is not connected; an agent is never moved to another broker`, {brokerId: agent.brokerId})
}

/**
 * How often a create is placed again when its broker filled up before its insert. Each time
 * means another create took that slot, and placement only offers brokers under the cap by
 * committed counts, so it ends by itself (all full is 429 from placement); this only bounds it.
 */
const PLACE_AGAIN = 20

/**
 * Places a new agent and inserts it. Placement reads brokers' loads outside the insert's
 * transaction, so concurrent creates can pick the same broker for its last free slot; the
 * quota check in the transaction then refuses all but one. A create placed by the Hub (not
 * `--broker`) is placed again, on loads that now count the others, rather than refused while
 * other brokers have room: 429 only when every broker is at the cap.
 */
export async function insertPlaced<T>(first: string, place: () => Promise<string>, insert: (brokerId: string) => Promise<T>, requested: boolean): Promise<{record: T; brokerId: string}> {
  for (let attempt = 0; ; attempt++) {
    const brokerId = attempt === 0 ? first : await place()
    try {
      return {record: await insert(brokerId), brokerId}
    } catch (err) {
      const full = err instanceof AppError && err.code === 'quota_exceeded' && (err.details as {quota?: string} | undefined)?.quota === 'max_agents_per_broker'
      if (!full || requested || attempt >= PLACE_AGAIN) throw err
    }
  }
}

/**
 * Quota checks, inside the transaction that inserts the agent and holding the project and broker
 * row locks, so two concurrent creates cannot both pass the last free slot.
 */
export async function checkQuotas(repos: Repos, projectId: string, brokerId: string, quotas: AgentSettings['quotas']): Promise<void> {
  await repos.locks.project(projectId)
  await repos.locks.broker(brokerId)
  const inProject = await repos.agents.countActive({projectId})
  if (inProject >= quotas.maxAgentsPerProject) {
    throw new AppError('quota_exceeded', `the project has ${inProject} agents, its limit (quotas.max_agents_per_project) is ${quotas.maxAgentsPerProject}`, {quota: 'max_agents_per_project', limit: quotas.maxAgentsPerProject})
  }
  if (quotas.enforceBrokerQuotas) {
    const onBroker = await repos.agents.countActive({brokerId})
    if (onBroker >= quotas.maxAgentsPerBroker) {
      throw new AppError('quota_exceeded', `the broker runs ${onBroker} agents, its limit (quotas.max_agents_per_broker) is ${quotas.maxAgentsPerBroker}`, {quota: 'max_agents_per_broker', limit: quotas.maxAgentsPerBroker})
    }
  }
}
