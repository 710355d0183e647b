import type {FastifyInstance} from 'fastify'
import type {Logger} from 'pino'
import {forwardingGateway, type BrokerGateway, type RemoteBrokers} from '../../domain/brokers/gateway.js'
import type {Clock} from '../../domain/shared/clock.js'
import type {ReplicasRepo} from '../../store/repositories/replicas.js'
import type {TunnelRegistry} from '../tunnel/tunnel-registry.js'
import {AppError} from '../../api/app-error.js'
import {forwardClient} from './forward-client.js'
import {forwardRoutes} from './forward-routes.js'
import {replicaVerifier} from './replica-auth.js'
import {ReplicaDirectory, type DirectoryTimings} from './replica-directory.js'

export interface Replicas {
  /** This replica's directory entry (its id, and who holds which broker). */
  directory: ReplicaDirectory
  /**
   * The gateway the domain uses: local tunnels first, else the holding replica. Requests,
   * streams and byte streams (an agent's port) all choose the same way.
   */
  gateway: BrokerGateway
  /** The internal routes other replicas forward to. */
  routes: (app: FastifyInstance) => Promise<void>
  /** Publishes this replica (its broker lease holder id) at `url`, what the others call it at. */
  start(holderId: string, url: string): Promise<void>
  close(): Promise<void>
}

/**
 * Any replica serves any agent: wires the directory, the signed replica-to-replica client and
 * routes, and the forwarding gateway around this replica's tunnels.
 */
export function createReplicas(deps: {replicas: ReplicasRepo; clock: Clock; logger: Logger; tunnels: TunnelRegistry; secretsKey: () => Buffer; timings?: Partial<DirectoryTimings>}): Replicas {
  const directory = new ReplicaDirectory(deps.replicas, deps.clock, deps.logger, deps.timings)
  const client = forwardClient({id: () => directory.id, secretsKey: deps.secretsKey})
  const holder = (brokerId: string) => {
    const h = directory.holderOf(brokerId)
    if (!h) throw new AppError('broker_unavailable', `broker ${brokerId} is not connected`, {sent: false})
    return h
  }
  const remote: RemoteBrokers = {
    capabilities: (brokerId) => directory.holderOf(brokerId)?.capabilities ?? null,
    request: (brokerId, method, params, timeoutMs) => client.request(holder(brokerId), method, params, timeoutMs),
    openStream: (brokerId, method, params) => client.openStream(holder(brokerId), method, params),
    openDuplex: (brokerId, method, params) => client.openDuplex(holder(brokerId), method, params),
  }
  return {
    directory,
    gateway: forwardingGateway(deps.tunnels, remote),
    routes: forwardRoutes({tunnels: deps.tunnels, verify: replicaVerifier(deps.secretsKey, () => directory.id)}),
    start: (holderId, url) => directory.start(holderId, url),
    close: () => directory.close(),
  }
}
