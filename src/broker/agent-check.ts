import type {RunResult} from './runtimes/run-command.js'

/** The most of a check's output kept (its end: where test runners print the verdict). */
export const CHECK_OUTPUT_BYTES = 4096

/**
 * `agent.check` (Teams, attempts): runs the attempt's check command with `sh -c` in its own
 * work tree, inside its own sandbox or container (Runtime.exec through Broker.runInAgent), never
 * on the host: the command runs the agent's own code. Answers the exit code and the last 4 KiB
 * of stdout and stderr together.
 */
export async function runAgentCheck(params: Record<string, unknown>, runInAgent: (agentId: string, argv: string[]) => Promise<RunResult>): Promise<{exitCode: number; output: string}> {
  const agentId = String(params.agentId ?? '')
  const command = typeof params.command === 'string' ? params.command : ''
  if (!agentId || !command) return {exitCode: 2, output: 'no check command'}
  const r = await runInAgent(agentId, ['sh', '-c', command])
  const all = Buffer.concat([r.stdout, Buffer.from(r.stderr ?? '')])
  return {exitCode: r.code, output: all.subarray(Math.max(0, all.length - CHECK_OUTPUT_BYTES)).toString('utf8')}
}
