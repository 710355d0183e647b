/**
 * An approval (CONTRACT "Approvals"): one permission request of a harness as the Hub holds it.
 * One definition for the Hub, the CLI, the hook and the web pages.
 */
export const APPROVAL_STATES = ['pending', 'allowed', 'denied', 'expired', 'answered'] as const
export type ApprovalState = (typeof APPROVAL_STATES)[number]

/** Who decided: a person, an agent (the requester's parent), a rule of `approvals.rules` (its index), or the harness's terminal dialog. */
export type ApprovalDecider = {kind: 'user'; id: string} | {kind: 'agent'; id: string} | {kind: 'rule'; index: number} | {kind: 'terminal'}

export interface ApprovalDto {
  id: string
  agentId: string
  /** The agent's name when it asked (for lists; the ID is what identifies it). */
  agentName: string
  projectId: string
  /** The harness's tool name (`Bash`, `Edit`, `shell`, ...). */
  tool: string
  /** What the person must judge: for a shell tool the command itself (`npm test`). */
  summary: string
  /** The tool's input as the harness gave it. */
  input: unknown
  state: ApprovalState
  createdAt: string
  /** When the harness's hook stops waiting and its terminal dialog is the only way left. */
  expiresAt: string
  decidedBy: ApprovalDecider | null
  decidedAt: string | null
  reason: string | null
}

/** `POST /api/v1/approvals/:id/decision`. */
export interface ApprovalDecisionInput {
  decision: 'allow' | 'deny'
  reason?: string
}
