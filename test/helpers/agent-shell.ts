import {expect} from 'vitest'
import {waitFor, type LiveHub} from './live-hub.js'

/** A shell agent's output as the Hub serves it (screen text). */
export const agentLogs = async (hub: LiveHub, id: string): Promise<string> => String((await hub.request('GET', `/api/v1/agents/${id}/logs`)).body)

/**
 * Types `line` into a shell agent through the keys route (then Enter) and answers the value its
 * output shows after `<marker>=`. The marker is split in the typed text (`m""arker=`), so the echo
 * of the line itself never matches. With `retryKeys`, keys are sent again until one is delivered
 * (`podman exec` may time out on a loaded machine); use it only for idempotent lines.
 */
export async function typedInto(hub: LiveHub, id: string, line: string, marker: string, opts: {timeoutMs?: number; retryKeys?: boolean} = {}): Promise<string> {
  const sent = line.replace(`${marker}=`, `${marker[0]}""${marker.slice(1)}=`)
  const send = () => hub.request('POST', `/api/v1/agents/${id}/keys`, {body: {keys: `${sent}\r`}})
  if (opts.retryKeys) await waitFor(async () => (await send()).status === 200, 120_000, 'keys delivered')
  else {
    const r = await send()
    expect(r.status, JSON.stringify(r.body)).toBe(200)
  }
  const re = new RegExp(`${marker}=(\\S*)`)
  return (await waitFor(async () => re.exec(await agentLogs(hub, id))?.[1], opts.timeoutMs ?? 30_000, marker)) as string
}
