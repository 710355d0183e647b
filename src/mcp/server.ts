// `svc mcp`: the Model Context Protocol on stdio, with the official SDK's low-level Server (the
// tools' input schemas are plain JSON Schema, so no schema library of ours is involved). Loaded
// only by `svc mcp`, so other commands never pay for the SDK.
import {Server} from '@modelcontextprotocol/sdk/server/index.js'
import {StdioServerTransport} from '@modelcontextprotocol/sdk/server/stdio.js'
import {CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult} from '@modelcontextprotocol/sdk/types.js'
import {AppError} from '../api/app-error.js'
import {TOOLS, type ToolContext} from './tools.js'

/**
 * A tool's failure is a tool result with `isError` (the model sees it and can act on it), never a
 * protocol error: its text is the Hub's error envelope, `{error: {code, message, details}}`, and
 * `structuredContent` carries the same object.
 */
export function toolError(err: unknown): CallToolResult {
  const e = err instanceof AppError ? err : new AppError('internal_error', err instanceof Error ? err.message : String(err))
  const envelope = {error: {code: e.code, message: e.message, ...(e.details && {details: e.details})}}
  return {isError: true, content: [{type: 'text', text: JSON.stringify(envelope)}], structuredContent: envelope}
}

export async function callTool(ctx: ToolContext, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  const tool = TOOLS.find((t) => t.name === name)
  if (!tool) return toolError(new AppError('not_found', `no tool named ${name}; tools: ${TOOLS.map((t) => t.name).join(', ')}`))
  try {
    const result = (await tool.run(ctx, args)) ?? {}
    return {content: [{type: 'text', text: JSON.stringify(result, null, 2)}], structuredContent: result as Record<string, unknown>}
  } catch (err) {
    return toolError(err)
  }
}

/** Serves until stdin ends (the harness closed the connection). */
export async function serveMcp(ctx: ToolContext, version: string): Promise<void> {
  const server = new Server({name: 'svc', version}, {capabilities: {tools: {}}})
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.map(({name, description, inputSchema}) => ({name, description, inputSchema})),
  }))
  server.setRequestHandler(CallToolRequestSchema, async (req) => callTool(ctx, req.params.name, req.params.arguments))
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve()
    process.stdin.once('end', () => resolve())
  })
  await server.connect(new StdioServerTransport())
  await closed
  await server.close()
}
