import {html} from 'lit'
import type {AgentDto as Agent} from '../../../src/api/dto.js'
import {needsYou} from '../agent-events.js'

/** The "Needs you" badge of an agent waiting for input (nothing otherwise). */
export const needsYouBadge = (a: Agent) => (needsYou(a) ? html`<span class="badge needs-you" data-role="needs-you">Needs you</span>` : '')

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
