import {Flags} from '@oclif/core'
import {BaseCommand} from '../src/cli/base-command.js'
import {hubEndpoints} from '../src/broker/hub-post.js'
import {credentialFor} from '../src/cli/credentials.js'
import {projectOrDefault} from '../src/cli/project-ref.js'

export default class Mcp extends BaseCommand<void> {
  static override description = `Serve svc's tools to a model over the Model Context Protocol (MCP) on stdio.

Tools: agent_create, agent_list, agent_get, agent_wait, agent_diff, agent_merge, agent_message, agent_tree, artifact_publish. They act with this CLI's credential (inside an agent: the agent's own), so every permission, ceiling and budget applies; a refusal is a tool error carrying the Hub's error code and message. Harnesses started by svc have it configured as the MCP server "svc". See docs/teams.md.`
  static override examples = ['<%= config.bin %> mcp', 'claude mcp add svc -- <%= config.bin %> mcp']
  static override flags = {
    project: Flags.string({description: 'Project ID or slug agent names resolve in (inside an agent: its own).'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute(): Promise<void> {
    const {flags} = await this.parse(Mcp)
    const client = await this.client(flags.hub)
    const projectId = projectOrDefault(flags.project, await this.settings())
    // Loaded here: the MCP SDK is only for this command.
    const {serveMcp} = await import('../src/mcp/server.js')
    const {mcpClient} = await import('../src/mcp/failover-client.js')
    // Inside an agent of several replicas: the URLs its hooks report to, tried in turn.
    const endpoints = flags.hub ? [] : hubEndpoints(process.env)
    await serveMcp({client: mcpClient(client, endpoints, credentialFor(client.endpoint)?.token ?? null), projectId}, this.config.version)
  }

  protected override human(): null {
    return null
  }
}
