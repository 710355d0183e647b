import {AppError} from '../../api/app-error.js'
import type {Repos} from '../../store/store.js'
import type {BrokerGateway} from '../brokers/gateway.js'
import type {AgentSettings} from './agent-settings.js'

/**
 * Picks the broker for a new agent: the requested one; else the project's default broker; else
 * the hub's `default_runtime_broker` (or, without one, the Hub's own co-located broker) when it
 * is online and dispatchable. "Online" means its tunnel is connected to this Hub.
 */
/** How long a create waits for a co-located broker that is still starting (detecting its runtime). */
export const COLOCATED_START_WAIT_MS = 15_000

/**
 * The broker a new agent goes to: the one asked for, else the project's default, else the Hub's
 * default (on a workstation, the co-located broker). A create that arrives while the co-located
 * broker is still starting (the Hub answers before its broker has detected the default runtime:
 * about a second, more with podman installed) waits for it, at most COLOCATED_START_WAIT_MS,
 * instead of answering 503 to a script that just saw `/healthz` answer.
 */
export async function chooseBroker(
  input: {requested?: string | null; projectDefault?: string | null},
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

async function pickBroker(
  input: {requested?: string | null; projectDefault?: string | null},
  settings: AgentSettings,
  gateway: BrokerGateway,
  colocatedId: string | null,
  repos: Repos,
): Promise<string> {
  if (input.requested) {
    const b = await repos.brokers.get(input.requested)
    if (!b) throw new AppError('not_found', `broker ${input.requested} not found`)
    if (!gateway.isConnected(b.id)) throw new AppError('broker_unavailable', `broker ${b.name} (${b.id}) is not connected`)
    return b.id
  }
  for (const candidate of [input.projectDefault, settings.defaultRuntimeBroker ?? colocatedId]) {
    if (candidate && gateway.isConnected(candidate) && gateway.capabilities(candidate)?.includes('agents')) return candidate
  }
  throw new AppError('broker_unavailable', 'no runtime broker is online to run this agent: start one with `svc broker start`, or pass --broker')
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
