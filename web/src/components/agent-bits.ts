import {html} from 'lit'
import type {AgentDto as Agent} from '../../../src/api/dto.js'
import {needsYou} from '../agent-events.js'

/** The "Needs you" badge of an agent waiting for input (nothing otherwise). */
export const needsYouBadge = (a: Agent) => (needsYou(a) ? html`<span class="badge needs-you" data-role="needs-you">Needs you</span>` : '')

/**
 * A running agent whose harness reported a failure (an unreachable model endpoint, a 5xx, a
 * refused key): its `error`, shown red until the harness works again.
 */
export const harnessFailed = (a: Agent) => a.phase === 'running' && !!a.error

/** The red "Error" badge of such an agent (nothing otherwise). */
export const errorBadge = (a: Agent) => (harnessFailed(a) ? html`<span class="badge failed" data-role="harness-error" title=${a.error ?? ''}>Error</span>` : '')

/** The agent page's red notice of such an agent (nothing otherwise). */
export const errorNotice = (a: Agent) =>
  harnessFailed(a) ? html`<p class="notice error" role="alert" id="agent-error">The harness reported an error: ${a.error}. Fix the cause (the model endpoint, its key), then send a message to try again.</p>` : ''

/** `$0.12`, or empty without usage. */
export const costText = (a: Agent) => (a.usage ? `$${a.usage.costUsd >= 1 || a.usage.costUsd === 0 ? a.usage.costUsd.toFixed(2) : a.usage.costUsd.toFixed(4)}` : '')

/** Rows of an agent's usage table: tokens, model calls, turns, cost. */
export function usageRows(a: Agent) {
  const u = a.usage
  if (!u) return html`<tr><th scope="row">Usage</th><td id="agent-usage">none reported</td></tr>`
  return html`
    <tr><th scope="row">Tokens</th><td id="agent-tokens">${u.inputTokens.toLocaleString('en')} in, ${u.outputTokens.toLocaleString('en')} out${u.cacheReadTokens || u.cacheWriteTokens ? `, ${((u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0)).toLocaleString('en')} cache` : ''}</td></tr>
    <tr><th scope="row">Model calls</th><td>${u.modelCalls}</td></tr>
    <tr><th scope="row">Turns</th><td>${a.turns}</td></tr>
    <tr><th scope="row">Cost</th><td id="agent-cost">${costText(a)}</td></tr>`
}
