/**
 * Shapes of resources on the wire, shared by the Hub (which builds them) and the client (which
 * reads them). One definition each, so the two cannot drift apart.
 */
export interface AgentDto {
  id: string
  name: string
  slug: string
  projectId: string
  brokerId: string | null
  phase: string
  activity: string | null
  detail: string
  harnessConfig: string
  template: string | null
  task: string | null
  role: string
  runtime: string | null
  error: string | null
  createdBy: {kind: 'user' | 'agent'; id: string}
  createdAt: string
  updatedAt: string
  lastHeartbeatAt: string | null
  /** `open` accepts messages; `closed` refuses them (keys are not affected). */
  messageMode: string
  /** Teams: the agent leading this one, or null for a root. */
  parent: {id: string; name: string} | null
  /** Teams: the effective budget of its whole subtree (docs/teams.md, "Budgets"); null: none set. */
  limits: AgentLimits
  /** Teams, attempts: the group of `--attempts`, else null. */
  group: string | null
  /** Teams, attempts: the last check run on idle (`--check`), else null. */
  check: {status: 'running' | 'passed' | 'failed'; exitCode: number | null; output: string} | null
  /**
   * The agent defaults applied at creation (max turns, model, timezone, ...), each with the layer
   * it came from: request, project, hub or coded.
   */
  appliedSettings: Record<string, {value: unknown; from: string}>
  /** The agent's git worktree and branch (path as its broker sees it); null without a checkout. */
  workspace: AgentWorkspace | null
  /** The image it was dispatched with (container runtimes), and its sandbox (`bubblewrap`, `none` (unsandboxed on purpose), `container`, or null). */
  image: string | null
  sandbox: string | null
  /** Turns ended so far (counted against `max_turns`). */
  turns: number
  /** Usage its harness reported; null until it reports any. */
  usage: AgentUsage | null
  /**
   * When its work last landed: the latest merge and push that succeeded (null: none). In the
   * answers of the agent list and of one agent; absent elsewhere (events, create).
   */
  mergedAt?: string | null
  pushedAt?: string | null
}

/** Where an agent works: a git worktree on its own branch, made from `baseRef` at `baseCommit`. */
export interface AgentWorkspace {
  path: string
  branch: string
  /** The checkout's branch the agent's branch was made from (what a merge lands on). */
  baseRef: string
  baseCommit: string
}

/**
 * Teams: the budget an agent's subtree (itself and its descendants) may spend; null: no limit.
 * `maxChildren` counts direct children ever created, `maxDepth` generations below the agent.
 */
export interface AgentLimits {
  maxTurns: number | null
  maxModelCalls: number | null
  maxDurationSeconds: number | null
  maxCostUsd: number | null
  maxChildren: number | null
  maxDepth: number | null
}

/** Usage totals of an agent, as its harness reports them. */
export interface AgentUsage {
  inputTokens: number
  outputTokens: number
  cacheReadTokens?: number
  cacheWriteTokens?: number
  modelCalls: number
  /** US dollars, as the harness computes it (or the Hub from a price table). */
  costUsd: number
  /** The latest totals of each harness session (a restart or resume starts another), by session ID. */
  sessions?: Record<string, SessionUsageTotals>
}

/** One harness session's cumulative usage, as last reported. */
export interface SessionUsageTotals {
  inputTokens: number
  outputTokens: number
  cacheReadTokens?: number
  cacheWriteTokens?: number
  modelCalls: number
  costUsd: number
  model?: string
  /** Where `costUsd` came from: the harness, the Hub's price table, or neither (model unknown: 0). */
  costFrom: 'harness' | 'price_table' | 'unpriced'
}

export interface ProjectDto {
  id: string
  name: string
  slug: string
  gitRemote: string | null
  /** The project's checkout on the co-located broker's machine, when one was linked at register. */
  localPath: string | null
  description: string
  createdBy: string
  createdAt: string
  updatedAt: string
  /** The caller's membership role; null for a system admin who is not a member. */
  role: string | null
}

export interface AccessTokenDto {
  id: string
  name: string
  projectId: string
  permissions: string[]
  prefix: string
  createdAt: string
  expiresAt: string | null
  lastUsedAt: string | null
  revokedAt: string | null
  status: 'active' | 'expired' | 'revoked'
}

/** `POST /api/v1/auth/device`: a device sign-in the CLI shows and then polls. */
export interface DeviceStartDto {
  /** The Hub's handle for this sign-in; the provider's device code never leaves the Hub. */
  deviceCode: string
  userCode: string
  verificationUri: string
  verificationUriComplete: string | null
  interval: number
  expiresIn: number
}

/** A hop of an adoption plan or of `notInCohort` (CONTRACT.md "Hop"); ceilings sorted or null. Revert hops add `originalEdgeId` and `coveredRecordIds`. */
export interface AdoptionHopDto {
  edgeId: string | null
  agentId: string
  projectId: string
  outcome: string
  reason: string | null
  delegator: {kind: string; id: string} | null
  role: string | null
  beforeCeiling: string[] | null
  afterCeiling: string[] | null
  recordId: string | null
  originalEdgeId?: string | null
  coveredRecordIds?: string[]
}

/** A delegation adoption record (CONTRACT.md "Adoption record"). */
export interface AdoptionRecordDto {
  id: string
  status: string
  reason: string | null
  origin: string
  originalEdgeId: string | null
  adoptedEdgeId: string | null
  beforeFingerprint: string | null
  projectId: string | null
  delegateAgentId: string | null
  actorKind: string | null
  actorId: string | null
  afterSummary: Record<string, unknown> | null
  revertedByKind: string | null
  revertedById: string | null
  revertedAt: string | null
  revertSummary: Record<string, unknown> | null
  createdAt: string
}

/** `GET /api/v1/admin/delegation-adoption`. */
export interface AdoptionStatusDto {
  snapshotTaken: boolean
  marker: {retryVersion: number; counts: Record<string, number>; writtenAt: string} | null
  cohort: {takenAt: string; recordCount: number} | null
  counts: {byStatus: Record<string, number>; byReason: Record<string, number>}
  records: AdoptionRecordDto[]
  total: number
  limit: number
  offset: number
  notInCohort: AdoptionHopDto[]
}

/** `POST /api/v1/admin/delegation-adoption/previews`. */
export interface AdoptionPreviewDto {
  planId: string
  planFingerprint: string
  operation: 'adopt' | 'revert'
  hops: AdoptionHopDto[]
  coveredRecordIds: string[]
  counts: Record<string, number>
}

/** `POST /api/v1/admin/delegation-adoption/commits`. */
export interface AdoptionCommitDto {
  planId: string
  hops: number
  coveredRecords: number
  recordIds: string[]
}

/** One file of an artifact version. */
export interface ArtifactManifestEntry {
  path: string
  size: number
  sha256: string
  mediaType: string
}

/** An artifact with one of its versions (publish, get) and its page URL. */
export interface ArtifactView {
  artifact: {id: string; ref: string; title: string; owner: {kind: 'user' | 'agent'; id: string}; projectId: string; currentVersion: number; createdAt: string}
  version: {seq: number; ref: string; createdAt: string; manifest: ArtifactManifestEntry[]}
  url: string
}

/** An artifact of a project's list: the current version's view, and every version newest first. */
export type ArtifactListItem = ArtifactView & {versions: ArtifactView['version'][]}

/** One changed file of an agent's diff (`GET /api/v1/agents/:id/diff`). */
export interface DiffFileDto {
  path: string
  status: 'added' | 'modified' | 'deleted' | 'renamed' | 'copied' | 'typechange'
  additions: number
  deletions: number
  /** The path before a rename or copy. */
  oldPath?: string
  /** Git saw binary content: counted as 0/0 and not dumped in the patch. */
  binary?: boolean
}

/** An agent's work against its base commit (`GET /api/v1/agents/:id/diff`). */
export interface AgentDiffDto {
  base: {ref: string; commit: string}
  head: {branch: string; commit: string}
  files: DiffFileDto[]
  patch: string
  /** The patch was cut at the byte cap (the file list is always complete). */
  truncated: boolean
}

/** `POST /api/v1/agents/:id/merge`. */
export interface MergeResultDto {
  merged: true
  commit: string
  strategy: 'merge' | 'squash'
  baseRef: string
  branch: string
  /** Paths the merge wrote in the checkout. */
  files: string[]
}

/**
 * What `DELETE /api/v1/agents/:id?branch=true` did with the agent's branch: deleted (every
 * commit on it is in its base branch) or kept, saying why.
 */
export interface DeletedBranchDto {
  name: string
  deleted: boolean
  /** Why it was kept (not merged, checked out, no checkout, the broker unreachable). */
  reason?: string
}

/** `POST /api/v1/agents/:id/push`. */
export interface PushResultDto {
  pushed: true
  remote: string
  /** The remote's git URL. */
  remoteUrl: string
  branch: string
  commit: string
  /** Where a person sees the branch: its web page on a known host, else the remote's URL. */
  url: string
}
