/**
 * Teams, attempts: an attempt's `check` runs every time its harness reports it idle, in the
 * attempt's own work tree and sandbox (the broker's `agent.check`: Runtime.exec, never on the
 * host; the command runs the agent's own code). The record carries the result: `check: {status:
 * running|passed|failed, exitCode, output}` (output: the last 4 KiB).
 */
import type {Logger} from 'pino'
import type {Store} from '../../store/store.js'
import type {BrokerGateway} from '../brokers/gateway.js'
import type {AgentCheck} from '../../store/repositories/agents.js'

/** Long enough for a test suite; the broker's exec has its own bound (runInAgent). */
const CHECK_TIMEOUT_MS = 180_000

export function createAttemptChecks(store: Store, gateway: Pick<BrokerGateway, 'request'>, logger: Pick<Logger, 'warn'>, now: () => string) {
  // One check at a time per agent; an idle report during a run asks for one more run after it
  // (the work may have changed since the running check started).
  const running = new Map<string, {again: boolean}>()

  async function runOnce(agentId: string): Promise<void> {
    const agent = await store.agents.get(agentId)
    if (!agent || agent.deletedAt || !agent.checkCommand || !agent.brokerId) return
    await store.agents.update(agentId, {check: {status: 'running', exitCode: null, output: ''}}, now())
    let result: AgentCheck
    try {
      const r = await gateway.request<{exitCode: number; output: string}>(agent.brokerId, 'agent.check', {agentId, command: agent.checkCommand}, CHECK_TIMEOUT_MS)
      result = {status: r.exitCode === 0 ? 'passed' : 'failed', exitCode: r.exitCode, output: r.output}
    } catch (err) {
      result = {status: 'failed', exitCode: null, output: `the check could not run: ${(err as Error).message}`}
    }
    await store.agents.update(agentId, {check: result}, now())
  }

  return {
    /** The agent reported `idle` (its report is stored): runs its check, if it has one, in the background. */
    onIdle(agentId: string): void {
      const current = running.get(agentId)
      if (current) {
        current.again = true
        return
      }
      const state = {again: false}
      running.set(agentId, state)
      void (async () => {
        try {
          do {
            state.again = false
            await runOnce(agentId)
          } while (state.again)
        } catch (err) {
          logger.warn({agentId, err: (err as Error).message}, 'running an attempt\'s check failed')
        } finally {
          running.delete(agentId)
        }
      })()
    },
  }
}
