/**
 * What `GET .../logs` serves: an agent's output as screen text (rendered through a headless
 * terminal, screen-render.ts) or, asked for, its raw terminal bytes; secrets masked either way
 * (log-masking.ts). And which deleted agents still have their output readable (by ID) within
 * `server.retention.deleted_agent_logs`.
 */
import type {AgentRecord} from '../../store/repositories/agents.js'
import type {Deps} from '../deps.js'
import {iso} from '../shared/clock.js'
import {maskText} from './log-masking.js'
import {renderScreen} from './screen-render.js'

export type LogFormat = 'screen' | 'raw'

/** `server.retention.deleted_agent_logs` when the configuration names none: 7 days. */
export const DEFAULT_DELETED_LOG_RETENTION_MS = 7 * 86_400_000

/**
 * The output to serve. The raw bytes are masked before rendering; the rendered text is masked
 * again, because a secret a program printed in pieces (split by colour or cursor sequences, or
 * wrapped at the pane's edge) only comes together on the screen.
 */
export async function servedLog(raw: string, patterns: readonly string[], format: LogFormat): Promise<string> {
  const masked = maskText(raw, patterns)
  if (format === 'raw') return masked
  return maskText(await renderScreen(masked), patterns)
}

/**
 * A deleted agent whose output is still kept: named by its ID (its name may be taken again), in
 * the project asked for, deleted less than the retention ago. Null otherwise (the caller's 404).
 */
export async function deletedWithLogs(store: Deps['store'], id: string, projectId: string | undefined, now: Date, retentionMs = DEFAULT_DELETED_LOG_RETENTION_MS): Promise<AgentRecord | null> {
  const agent = await store.agents.get(id)
  if (!agent?.deletedAt || (projectId && agent.projectId !== projectId)) return null
  return now.getTime() - Date.parse(agent.deletedAt) < retentionMs ? agent : null
}

/** Drops the kept output of agents deleted longer than the retention ago (run at each deletion). */
export async function pruneDeletedLogs(deps: Pick<Deps, 'store' | 'config' | 'logger'>, now: Date): Promise<void> {
  const retentionMs = deps.config.deletedAgentLogsRetentionMs ?? DEFAULT_DELETED_LOG_RETENTION_MS
  await deps.store.agents.pruneLogArchives(iso(new Date(now.getTime() - retentionMs))).catch((err) => deps.logger.warn({err: (err as Error).message}, 'pruning the output of deleted agents failed'))
}
