import type {HubRole} from './hub-roles.js'
import type {Permission} from './permissions.js'

/** Credential kinds of CONTRACT.md, read from the credential itself, never from a client claim. */
export type CredentialKind =
  | 'session'
  | 'dev'
  | 'user_access_token'
  | 'agent'
  | 'federated'
  | 'broker'
  | 'broker_for_user'

export interface UserPrincipal {
  kind: 'user'
  id: string
  email: string
  displayName: string
  systemAdmin: boolean
  /** Built-in Hub role (hub-roles.ts); admin permissions beside system admin. */
  hubRole?: HubRole | null
}

export interface AgentPrincipal {
  kind: 'agent'
  id: string
  projectId: string
}

export interface BrokerPrincipal {
  kind: 'broker'
  id: string
}

export type Principal = UserPrincipal | AgentPrincipal | BrokerPrincipal

/** The bounds a user access token puts on its user: one project, a set of permissions. */
export interface TokenBounds {
  tokenId: string
  projectId: string
  permissions: ReadonlySet<Permission>
}

/** Who is calling, with what kind of credential: every domain call takes one. */
export interface CallContext {
  principal: Principal
  credentialKind: CredentialKind
  requestId: string
  bounds?: TokenBounds
  /**
   * Scopes of an agent token (e.g. `project:artifact:read`, `ScopeAgentLifecycle`), fixed when
   * the token is minted from the agent's role. Absent for other credential kinds.
   */
  scopes?: ReadonlySet<string>
  /** The user a broker says it acts for (credential kind `broker_for_user`); grants nothing. */
  forUser?: string
}
