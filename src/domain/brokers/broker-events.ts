import type {Logger} from 'pino'
import type {AgentStatusEvent, AliveEvent, HelloEvent} from '../../api/tunnel-protocol.js'
import type {AgentsService} from '../agents/agents-service.js'
import type {DomainEvent} from '../deps.js'
import type {BrokersService} from './brokers-service.js'

/**
 * What the Hub does with a broker's tunnel events: a hello records the broker's capabilities
 * and reconciles the agents it says it runs; status events and liveness reports update agents;
 * telemetry reports go to the Hub's telemetry pipeline.
 * Failures are logged, never thrown back into the tunnel.
 */
export function createBrokerEvents(deps: {brokers: BrokersService; agents: AgentsService; logger: Logger; telemetry?: {fromBroker(brokerId: string, data: unknown): unknown; emit(event: DomainEvent): void}}) {
  const {brokers, agents, logger} = deps

  async function handle(brokerId: string, event: string, data: unknown): Promise<void> {
    switch (event) {
      case 'hello': {
        const h = data as HelloEvent
        // The agents the hello's list speaks of: read before the broker counts as online, so one
        // started on it from then on is not judged by a list that could not hold it.
        const known = await agents.agentsAtHello(brokerId)
        await brokers.connected(brokerId, {capabilities: h.capabilities ?? [], runtimes: h.runtimes ?? [], version: h.version ?? ''})
        deps.telemetry?.emit({type: 'broker.connected', attributes: {'broker.id': brokerId, version: h.version ?? '', agents: (h.agents ?? []).length}})
        await agents.reconcile(brokerId, known, h.agents ?? [], h.workspaces ?? [])
        return
      }
      case 'agent_status':
        return agents.brokerReportedStatus(brokerId, data as AgentStatusEvent)
      case 'alive':
        await brokers.seen(brokerId)
        return agents.brokerReportedAlive(brokerId, (data as AliveEvent).agentIds ?? [])
      // Hub reporting of a broker: its filtered telemetry events, every report interval.
      case 'telemetry':
        deps.telemetry?.fromBroker(brokerId, data)
        return
    }
  }

  return {
    onEvent(brokerId: string, event: string, data: unknown): void {
      handle(brokerId, event, data).catch((err) => logger.warn({err, brokerId, event}, 'tunnel event failed'))
    },
    onDisconnect(brokerId: string): void {
      logger.info({brokerId}, 'broker disconnected')
      deps.telemetry?.emit({type: 'broker.disconnected', attributes: {'broker.id': brokerId}})
      brokers.disconnected(brokerId).catch((err) => logger.warn({err, brokerId}, 'marking broker offline failed'))
    },
  }
}
