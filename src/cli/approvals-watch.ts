import type {Approval} from '../client/approvals-client.js'
import type {HubClient} from '../client/hub-client.js'
import {approvalLine, approvalsTable} from './approval-render.js'

/**
 * `svc approvals --watch`: the pending approvals, kept live until interrupted. A new request
 * or a decision changes its agent's activity, an event of the stream: each event (and each
 * reconnection) reads the list again, a burst of events once. On a TTY the list is redrawn;
 * else each approval that appears is one line (`--json`: `{"approval": {...}}`).
 */
export async function watchApprovals(client: HubClient, load: () => Promise<Approval[]>, o: {json: boolean; redraw: boolean; out?: NodeJS.WriteStream}): Promise<never> {
  const out = o.out ?? process.stdout
  const shown = new Set<string>()
  let reading: Promise<void> | null = null
  let again = false
  const reload = async (): Promise<void> => {
    if (reading) {
      again = true
      return reading
    }
    reading = (async () => {
      do {
        again = false
        const list = await load()
        if (o.redraw && !o.json) out.write('\x1b[H\x1b[2J' + approvalsTable(list) + '\n')
        else for (const a of list) if (!shown.has(a.id)) out.write((o.json ? JSON.stringify({approval: a}) : approvalLine(a)) + '\n')
        for (const a of list) shown.add(a.id)
      } while (again)
    })().finally(() => (reading = null))
    return reading
  }
  await client.followEvents({}, () => void reload().catch(() => {}), reload)
  return new Promise<never>(() => {})
}
