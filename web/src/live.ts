import type {ApprovalDto} from '../../src/api/approval.js'
import {followAgentEvents, type AgentEvent} from './agent-events.js'
import {markReady} from './readiness.js'

/**
 * A view kept live by agent events instead of polling: `load` reads the view's state now and
 * after every (re)connection of the event stream (so nothing missed while disconnected stays
 * missed), `onEvent` applies each change in place. A failed load is shown as the view's
 * `failure`; the first good one writes the view's readiness mark once it is on screen.
 */
export function liveView(host: {updateComplete: Promise<unknown>; failure: string}, view: string, load: () => Promise<void>, onEvent: (e: AgentEvent) => void, onApproval?: (a: ApprovalDto) => void): () => void {
  let first = true
  const refresh = async () => {
    try {
      await load()
      host.failure = ''
      if (first) {
        first = false
        await host.updateComplete
        void markReady(view)
      }
    } catch (err) {
      host.failure = (err as Error).message
    }
  }
  void refresh()
  let opened = false
  return followAgentEvents(onEvent, () => {
    // The first open follows the load just started; later ones are reconnections.
    if (opened) void refresh()
    opened = true
  }, onApproval)
}
