import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {projectOrDefault} from '../../src/cli/project-ref.js'
import {credentialFor} from '../../src/cli/credentials.js'
import {forwardPort} from '../../src/cli/port-forward.js'
import {agentsApi} from '../../src/client/agents-client.js'

interface ForwardResult {
  agentId: string
  port: number
  local: number
  connections: number
}

export default class AgentForward extends BaseCommand<ForwardResult> {
  static override description = `Forward a local port to a port an agent listens on, through the Hub and its broker's tunnel.

Runs until interrupted (Ctrl-C). Each connection to 127.0.0.1:<local> reaches the agent's port, wherever its broker runs. Works whether or not the Hub previews ports (auto_expose_ports.enabled). With --json, one line {"forward": {...}} once listening, and the totals when it stops.`
  static override args = {
    agent: Args.string({description: 'Agent name or ID.', required: true}),
    port: Args.integer({description: 'The agent\'s port (see GET /api/v1/agents/<id>/ports, or $PORT inside the agent).', required: true, min: 1, max: 65535}),
  }
  static override flags = {
    local: Flags.integer({description: 'Local port on 127.0.0.1 (default: the agent\'s port; 0: any free port).', min: 0, max: 65535}),
    project: Flags.string({description: 'Project ID or slug.'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute(): Promise<ForwardResult> {
    const {args, flags} = await this.parse(AgentForward)
    const client = await this.client(flags.hub)
    const {agent} = await agentsApi(client).get(projectOrDefault(flags.project, await this.settings()), args.agent)
    // Refused now (not running, not allowed, no broker) rather than on the first connection.
    const {ports} = await client.call<{ports: Array<{port: number}>}>('GET', `/api/v1/agents/${encodeURIComponent(agent.id)}/ports`)
    const local = flags.local ?? args.port
    const stop = new Promise((resolve) => {
      process.once('SIGINT', resolve)
      process.once('SIGTERM', resolve)
    })
    let bound = local
    const {connections} = await forwardPort({
      endpoint: client.endpoint,
      token: credentialFor(client.endpoint)?.token ?? null,
      agentId: agent.id,
      port: args.port,
      local,
      until: stop,
      onReady: (p) => {
        bound = p
        if (this.json) process.stdout.write(JSON.stringify({forward: {agentId: agent.id, port: args.port, local: p}}) + '\n')
        else {
          const note = ports.some((x) => x.port === args.port) ? '' : ` (it does not listen on ${args.port} yet)`
          process.stderr.write(`Forwarding 127.0.0.1:${p} -> agent ${agent.name} port ${args.port}${note}. Ctrl-C to stop.\n`)
        }
      },
      onRefused: (message) => process.stderr.write(`svc: a connection was refused: ${message}\n`),
    })
    return {agentId: agent.id, port: args.port, local: bound, connections}
  }

  protected override human(r: ForwardResult): string {
    return `Stopped forwarding 127.0.0.1:${r.local} (${r.connections} connection${r.connections === 1 ? '' : 's'}).`
  }
}
