import {randomBytes} from 'node:crypto'
import {AppError} from './app-error.js'

/**
 * Raw message input was removed in favour of the keys operation (spec: direct cutover). Every
 * message ingress refuses a `raw` field — at the top level or inside `message` or
 * `structured_message`, in any capitalisation, with any value — before anything else happens
 * to the request (except the target lookup of the agent message routes).
 */
export const INGRESS = {
  agentMessage: 'agent_message',
  projectAgentMessage: 'project_agent_message',
  projectBroadcast: 'project_broadcast',
  brokerInbound: 'broker_inbound',
  brokerInboundRouted: 'broker_inbound_routed',
  scheduledEvent: 'scheduled_event',
  schedule: 'schedule',
  runtimeBrokerMessage: 'runtime_broker_message',
} as const

export type Ingress = (typeof INGRESS)[keyof typeof INGRESS]

/** The keys route to use instead: the generic one, or the project-scoped form. Never resolved. */
export const KEYS_ROUTE = 'POST /api/v1/agents/{agentId}/keys'
export const PROJECT_KEYS_ROUTE = 'POST /api/v1/projects/{projectId}/agents/{agentIdOrSlug}/keys'

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const hasRawKey = (o: Record<string, unknown>) => Object.keys(o).some((k) => k.toLowerCase() === 'raw')

/**
 * True when the body carries a raw field. `text` is the body as received: when it did not
 * parse as JSON, a `"raw":` key anywhere in it counts (a malformed value is still a raw field).
 */
export function carriesRaw(body: unknown, text?: string | null): boolean {
  if (body === undefined && typeof text === 'string') return /"raw"\s*:/i.test(text)
  // A body sent as text/plain reaches the route as the string it is: judge its text the same way.
  if (typeof body === 'string') return /"raw"\s*:/i.test(body)
  if (!isObject(body)) return false
  if (hasRawKey(body)) return true
  for (const [k, v] of Object.entries(body)) {
    const key = k.toLowerCase()
    if ((key === 'message' || key === 'structured_message' || key === 'payload') && isObject(v)) {
      if (hasRawKey(v)) return true
      for (const [k2, v2] of Object.entries(v)) {
        if ((k2.toLowerCase() === 'message' || k2.toLowerCase() === 'structured_message') && isObject(v2) && hasRawKey(v2)) return true
      }
    }
  }
  return false
}

/** The 422 refusal, with a fresh operation ID. */
export function rawRefusal(ingress: Ingress, replacement = KEYS_ROUTE): AppError {
  return new AppError('raw_input_removed', 'raw message input was removed; send literal keystrokes with the keys operation instead', {
    operation_id: 'op_' + randomBytes(8).toString('hex'),
    ingress,
    replacement,
  })
}

/** The one content-free log line a refusal writes. */
export function logRawRefusal(logger: {info: (obj: object, msg: string) => void}, err: AppError): void {
  logger.info({route: 'message_raw_removed', ingress: err.details?.ingress, operation_id: err.details?.operation_id}, 'raw message input refused')
}
