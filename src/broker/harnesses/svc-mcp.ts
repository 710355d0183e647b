// `svc mcp` as each harness's MCP server `svc` (docs/harnesses.md, docs/teams.md). The command is
// the `svc` on the sandbox's PATH (the shim the runtime writes, see writeSvcShim), so the server
// runs inside the agent's sandbox with the agent's own credential from its environment.
export const SVC_MCP_NAME = 'svc'
export const SVC_MCP_COMMAND = 'svc'
export const SVC_MCP_ARGS = ['mcp']
/**
 * What `svc mcp` reads from its environment: the Hub, the agent's token and identity, its project.
 * Harnesses that start MCP servers with a filtered environment (Codex) are told to pass these on.
 */
export const SVC_MCP_ENV = ['SVC_HUB_ENDPOINT', 'SVC_AUTH_TOKEN', 'SVC_AUTH_TOKEN_FILE', 'SVC_AGENT_ID', 'SVC_PROJECT_ID']
