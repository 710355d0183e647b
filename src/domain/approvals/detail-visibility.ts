import type {Principal} from '../authz/context.js'
import {seesApprovalsOf} from './approval-authz.js'

/**
 * What an agent's `detail` shows to whoever reads the agent. A harness writes the tool and what
 * it does there: `Bash: deploy --token …` while it runs, `Permission: Bash: deploy --token …`
 * while it waits for an approval. That command is the approval's `input`, and it may hold a
 * secret, so a caller that does not see the agent's approvals (approval-authz.ts: another agent
 * than the agent itself or its parent) reads only the detail's label: `Bash`, `Permission: Bash`
 * (CONTRACT "Approvals": the detail starts `Permission: <tool>`; "Real coding agents": an
 * executing detail starts with the tool's name). Persons, the agent itself and its parent read it
 * whole, as they read the approval.
 *
 * Redacted when read, not when written: the stored detail is what persons see in lists, pages and
 * webhooks; an agent's own report may be any text, and whatever is not a label is dropped.
 */

/** `Permission: <tool>` or `<tool>`: a tool's name is one word (`Bash`, `mcp__github__create_issue`, `run_shell_command`). */
const LABEL = /^(?:Permission: )?[^\s:]{1,200}(?=: |$)/

/** The detail's label (`Bash`, `Permission: Bash`), or '' when it has none. */
export function detailLabel(detail: string): string {
  return LABEL.exec(detail)?.[0] ?? ''
}

/** Whether `principal` reads the agent's detail whole: anyone but another agent than it or its parent. */
export function readsWholeDetail(principal: Pick<Principal, 'kind' | 'id'>, agent: {id: string; parentId: string | null}): boolean {
  return principal.kind !== 'agent' || seesApprovalsOf(principal, agent)
}

/** `detail` as `principal` may read it on the agent `agent`. */
export function detailFor(principal: Pick<Principal, 'kind' | 'id'>, agent: {id: string; parentId: string | null}, detail: string): string {
  return readsWholeDetail(principal, agent) ? detail : detailLabel(detail)
}

/** An agent view (or any object with `id`, `parent` and `detail`) as `principal` may read it. */
export function shownTo<T extends {id: string; parent: {id: string} | null; detail: string}>(principal: Pick<Principal, 'kind' | 'id'>, view: T): T {
  const detail = detailFor(principal, {id: view.id, parentId: view.parent?.id ?? null}, view.detail)
  return detail === view.detail ? view : {...view, detail}
}
