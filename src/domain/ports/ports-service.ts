/**
 * An agent's ports (CONTRACT.md "Environments"): the ports it listens on, with their preview
 * URL, and connections to one of them through its broker's tunnel, for a preview
 * (`<hub>/agents/<id>/ports/<port>/`) and for `svc agent forward`. Every client (the route, the
 * CLI, the web page) goes through here.
 *
 * Who may: a user who may read the agent; an agent only for itself and its descendants (any
 * other agent answers 404, as for attach: an agent must not reach another agent's ports through
 * the Hub either) and with `agent.port_forward` along its delegation chain; brokers never.
 */
import type {Duplex} from 'node:stream'
import {AppError, notFound} from '../../api/app-error.js'
import type {AgentRecord} from '../../store/repositories/agents.js'
import type {CallContext} from '../authz/context.js'
import type {BrokerGateway} from '../brokers/gateway.js'
import type {Deps} from '../deps.js'
import type {AgentAccess} from '../agents/access.js'
import type {AgentSettingsSource} from '../agents/agent-settings.js'
import {requireAttachReach} from '../agents/attach-reach.js'
import {userPrincipal} from '../auth/credentials.js'
import {previewTokens} from './preview-token.js'

export interface PortView {
  port: number
  /** `<hub>/agents/<id>/ports/<port>/`, or null while `auto_expose_ports.enabled` is off. */
  url: string | null
}

export interface PortsServiceDeps {
  access: AgentAccess
  gateway: BrokerGateway
  settings: AgentSettingsSource
  /** The key preview tokens are signed with (the Hub's secrets key: the same on every replica). */
  previewKey: () => Buffer
}

const PORT_CAPABILITY = 'ports'

export function createPortsService(deps: Deps, a: PortsServiceDeps) {
  const {store, clock} = deps
  let tokens: ReturnType<typeof previewTokens> | null = null
  const signer = () => (tokens ??= previewTokens(a.previewKey()))

  async function authorize(ctx: CallContext, agent: AgentRecord): Promise<void> {
    const p = ctx.principal
    if (p.kind === 'broker') throw notFound('agent')
    if (p.kind === 'agent') {
      if (p.projectId !== agent.projectId) throw notFound('agent')
      await requireAttachReach(store, ctx, agent, 'attach')
      await a.access.walk.require(ctx, 'agent.port_forward', {message: 'not allowed: agent.port_forward on project'})
      return
    }
    await a.access.checkAgent(ctx, agent, 'agent.read')
  }

  /** The agent, readable by the caller, running on a connected broker that serves ports. */
  async function runningAgent(ctx: CallContext, ref: string): Promise<AgentRecord> {
    const agent = await a.access.resolve(ref)
    if (!agent) throw notFound('agent')
    await authorize(ctx, agent)
    if (agent.phase !== 'running' || !agent.runtimeRef || !agent.brokerId) throw new AppError('conflict', `agent ${agent.name} is not running (phase ${agent.phase})`)
    if (!a.gateway.isConnected(agent.brokerId)) throw new AppError('broker_unavailable', `the broker of agent ${agent.name} is not connected`)
    if (!a.gateway.capabilities(agent.brokerId)?.includes(PORT_CAPABILITY)) throw new AppError('broker_unavailable', `the broker of agent ${agent.name} is too old to reach its ports: upgrade it`)
    return agent
  }

  /** A broker refusal of a port the agent does not listen on is 404 `not_found`. */
  function translate(err: unknown, port: number): never {
    const code = err instanceof AppError ? (err.details as {brokerCode?: string} | undefined)?.brokerCode : undefined
    if (code === 'not_found') throw new AppError('not_found', `the agent does not listen on port ${port}`)
    if (code === 'ports_unavailable') throw new AppError('broker_error', (err as Error).message.replace(/^broker: /, ''))
    throw err
  }

  async function ports(agent: AgentRecord): Promise<number[]> {
    const res = await a.gateway.request<{ports: number[]}>(agent.brokerId!, 'agent.ports', {agentId: agent.id}, 15_000).catch((err) => translate(err, 0))
    return res.ports
  }

  return {
    /** `GET /api/v1/agents/:id/ports`; `origin`: the Hub as the caller reached it (else its public URL). */
    async list(ctx: CallContext, ref: string, origin?: string): Promise<{ports: PortView[]}> {
      const agent = await runningAgent(ctx, ref)
      const expose = (await a.settings()).autoExposePorts === true
      const base = (origin ?? deps.config.publicUrl).replace(/\/+$/, '')
      return {ports: (await ports(agent)).map((port) => ({port, url: expose ? `${base}/agents/${agent.id}/ports/${port}/` : null}))}
    },

    /**
     * A connection to the agent's `port` (`svc agent forward`, and previews once `preview`
     * allowed them). 404 when it does not listen there. Through any replica: when another
     * replica holds the broker's tunnel, the gateway relays the stream through it (authorized
     * here first, like every forwarded operation).
     */
    async connect(ctx: CallContext, ref: string, port: number): Promise<{agent: AgentRecord; stream: Duplex}> {
      if (!Number.isInteger(port) || port < 1 || port > 65535) throw new AppError('validation_error', 'port must be an integer from 1 to 65535', {field: 'port'})
      const agent = await runningAgent(ctx, ref)
      const stream = await a.gateway.openDuplex(agent.brokerId!, 'agent.port', {agentId: agent.id, port}).catch((err) => translate(err, port))
      return {agent, stream}
    },

    /** Whether previews through the Hub are on (`auto_expose_ports.enabled`); 404 otherwise. */
    async requirePreviews(): Promise<void> {
      if ((await a.settings()).autoExposePorts !== true) throw new AppError('not_found', 'previews of agent ports are off on this Hub (auto_expose_ports.enabled): use svc agent forward')
    },

    /** A preview token for a user (preview-token.ts); only users get one. */
    previewToken(ctx: CallContext, agentId: string, port: number): string | null {
      if (ctx.principal.kind !== 'user' || ctx.bounds) return null
      return signer().mint({userId: ctx.principal.id, agentId, port}, clock.now().getTime())
    },

    /** The caller a preview token stands for (its user, as of now), or 401. */
    async previewCaller(token: string, agentId: string, port: number, requestId: string): Promise<CallContext> {
      const grant = signer().verify(token, agentId, port, clock.now().getTime())
      const user = grant ? await store.users.get(grant.userId) : null
      if (!user) throw new AppError('unauthorized', 'this preview link expired: open the preview from the Hub again')
      if (user.status !== 'active') throw new AppError('user_suspended', 'this user is suspended')
      return {principal: userPrincipal(user), credentialKind: 'session', requestId}
    },
  }
}

export type PortsService = ReturnType<typeof createPortsService>
