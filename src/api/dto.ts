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
  /**
   * The agent defaults applied at creation (max turns, model, timezone, ...), each with the layer
   * it came from: request, project, hub or coded.
   */
  appliedSettings: Record<string, {value: unknown; from: string}>
}

export interface ProjectDto {
  id: string
  name: string
  slug: string
  gitRemote: string | null
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
