import type {AgentEventDto} from '../api/agent-event.js'
import {followAgentEvents} from '../client/event-stream.js'
import {mayTryNext} from '../api/replica-failover.js'
import type {RequestOptions} from '../client/http.js'
import {HubClient} from '../client/hub-client.js'
import type {Progress} from '../client/transfer.js'

/**
 * `svc mcp` inside an agent of a deployment with several replicas: the Hub URLs in the order
 * hub-post.ts `hubEndpoints` gives (`SVC_HUB_ENDPOINT`, then the rest of `SVC_HUB_ENDPOINTS`),
 * as the agent's hooks use them. A call that cannot reach one URL goes to the next (see
 * `mayTryNext`), and the URL that answered is tried first from then on, so the tools keep
 * working when the replica the agent started under is gone.
 */
export class FailoverHubClient extends HubClient {
  private readonly clients: HubClient[]
  private at = 0

  constructor(
    endpoints: string[],
    private readonly bearer: string | null,
  ) {
    super(endpoints[0], bearer)
    this.clients = endpoints.map((e) => new HubClient(e, bearer))
  }

  override async call<T>(method: string, path: string, body?: unknown, opts: Omit<RequestOptions, 'body' | 'token'> = {}): Promise<T> {
    const n = this.clients.length
    for (let i = 0; ; i++) {
      const at = (this.at + i) % n
      try {
        const result = await this.clients[at].call<T>(method, path, body, opts)
        this.at = at
        return result
      } catch (err) {
        if (i === n - 1 || !mayTryNext(err, method)) throw err
      }
    }
  }

  override followEvents(query: {agentId?: string; projectId?: string}, onEvent: (e: AgentEventDto) => void, onConnected?: () => Promise<void> | void) {
    const qs = new URLSearchParams(Object.entries(query).filter(([, v]) => v) as Array<[string, string]>).toString()
    const n = this.clients.length
    const urls = Array.from({length: n}, (_, i) => `${this.clients[(this.at + i) % n].endpoint.replace(/\/+$/, '')}/api/v1/events${qs ? `?${qs}` : ''}`)
    return followAgentEvents(urls, this.bearer, onEvent, onConnected)
  }

  /** An upload is sent once, to the URL that answered last. */
  override publishArtifact(file: string, size: number, q: {name: string; title?: string; scope?: string; artifactId?: string}, sha256: string, onProgress?: Progress) {
    return this.clients[this.at].publishArtifact(file, size, q, sha256, onProgress)
  }
}

const normal = (u: string) => {
  try {
    return new URL(u).toString().replace(/\/+$/, '')
  } catch {
    return null
  }
}

/**
 * The client `svc mcp` serves with: `client` itself, or, inside an agent given several Hub URLs
 * whose first is the one `client` was made for (no `--hub` elsewhere), a FailoverHubClient
 * over them all.
 */
export function mcpClient(client: HubClient, endpoints: string[], token: string | null): HubClient {
  const urls = endpoints.map(normal).filter((u): u is string => !!u)
  return urls.length > 1 && urls[0] === normal(client.endpoint) ? new FailoverHubClient(urls, token) : client
}
