import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {StdioClientTransport} from '@modelcontextprotocol/sdk/client/stdio.js'
import {BIN} from './cli.js'

/** An MCP client of a real `svc mcp` process (stdio), run with `env` in `cwd` as a lead's harness runs it. */
export async function connectSvcMcp(env: NodeJS.ProcessEnv, cwd: string): Promise<Client> {
  const client = new Client({name: 'svc-test', version: '1.0.0'})
  await client.connect(new StdioClientTransport({command: process.execPath, args: [BIN, 'mcp'], env: env as Record<string, string>, cwd, stderr: 'pipe'}))
  return client
}
