import type {Exec} from '../compiled-statement.js'
import {eventChanged, snapshotOf, type EventColumns, type StatusStep} from './agents.js'
import {PENDING_PROBE} from './approvals.js'

/**
 * The status writer's write (domain/agents/status-writer.ts), against `Exec`, in the status
 * transaction of a batch of reports (store/status-transaction.ts). An agent's pending steps in
 * order, each as `agentsRepo.update` would write it (heartbeat and `updated_at` too, an agent
 * event for each step that changes what one carries, with the columns `appendAgentEvent` writes),
 * with statement texts written once and one read of the row for all steps. With `live`, nothing
 * is written unless the agent exists, is not deleted and is in one of those phases: answers the
 * name and phase that refused it. `onEvent` is told when an event was appended.
 */
export const statusStatements = (x: Exec, onEvent: () => void) => ({
  async writeStatus(id: string, steps: readonly StatusStep[], now: string, live: ReadonlySet<string> | null): Promise<{refused: {name: string; phase: string} | null}> {
    const [row] = await x.all<EventColumns & {name: string; project_id: string}>(ROW, [id])
    if (live && (!row || row.deleted_at || !live.has(row.phase))) return {refused: {name: row?.name ?? id, phase: row?.deleted_at ? 'deleted' : (row?.phase ?? 'unknown')}}
    if (!row) return {refused: null}
    let cur = snapshotOf(row)
    for (const step of steps) {
      // What the row holds after (RETURNING: a concurrent writer's change on PostgreSQL included, as in `update`).
      const [after] = await x.all<EventColumns>(updateText(step), updateParams(step, now, id))
      if (!after) break
      const next = snapshotOf(after)
      if (eventChanged(cur, next)) {
        // A deleted agent's last event says so in its phase (as appendAgentEvent writes it).
        await x.run(EVENT, [id, row.project_id, row.name, next.deleted ? 'deleted' : next.phase, next.activity, next.detail, cur.phase, cur.activity, next.error, cur.error, now])
        onEvent()
      }
      cur = next
    }
    return {refused: null}
  },
  /** Whether the agent has a pending approval (the writer settles it after the commit). */
  async hasPendingApproval(id: string): Promise<boolean> {
    return (await x.all(PENDING_PROBE, [id])).length > 0
  },
})

const ROW = 'select name, project_id, phase, activity, detail, error, deleted_at from agents where id = ?'
const EVENT = 'insert into agent_events (agent_id, project_id, name, phase, activity, detail, prev_phase, prev_activity, error, prev_error, at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)'
const FIELDS = ['phase', 'activity', 'detail', 'error'] as const

// One update text per set of fields a step carries (16 at most), each built once.
const updates = new Map<number, string>()
function updateText(step: StatusStep): string {
  let mask = 0
  for (let i = 0; i < FIELDS.length; i++) if (step[FIELDS[i]] !== undefined) mask |= 1 << i
  let text = updates.get(mask)
  if (text === undefined) {
    const sets = FIELDS.filter((_, i) => mask & (1 << i)).map((c) => `${c} = ?, `)
    updates.set(mask, (text = `update agents set ${sets.join('')}last_heartbeat_at = ?, updated_at = ? where id = ? returning phase, activity, detail, error, deleted_at`))
  }
  return text
}

function updateParams(step: StatusStep, now: string, id: string): unknown[] {
  const params: unknown[] = []
  for (const f of FIELDS) if (step[f] !== undefined) params.push(step[f])
  params.push(step.heartbeatAt, now, id)
  return params
}
