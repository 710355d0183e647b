import type {Generated} from 'kysely'

/**
 * Table types. Portable column types on both dialects: text IDs, ISO-8601 text timestamps
 * (canonical, UTC, millisecond precision), integer 0/1 booleans and JSON as text. Repositories
 * convert to domain shapes so nothing above the store sees a dialect difference.
 */
export interface UsersTable {
  id: string
  email: string
  display_name: string
  status: string
  system_admin: number
  oidc_issuer: string | null
  oidc_subject: string | null
  created_at: string
  updated_at: string
  last_login_at: string | null
}

export interface ProjectsTable {
  id: string
  name: string
  slug: string
  git_remote: string | null
  description: string
  created_by: string
  created_at: string
  updated_at: string
}

export interface ProjectMembersTable {
  project_id: string
  user_id: string
  role: string
  created_at: string
}

export interface AccessTokensTable {
  id: string
  user_id: string
  name: string
  project_id: string
  permissions: string
  token_hash: string
  prefix: string
  created_at: string
  expires_at: string | null
  last_used_at: string | null
  revoked_at: string | null
}

export interface SessionsTable {
  id: string
  user_id: string
  token_hash: string
  source: string
  created_at: string
  expires_at: string
  revoked_at: string | null
}

export interface LoginFlowsTable {
  id: string
  kind: string
  data: string
  created_at: string
  expires_at: string
  consumed_at: string | null
}

export interface HubSettingsTable {
  key: string
  value: string
  updated_at: string
}

export interface Database {
  users: UsersTable
  projects: ProjectsTable
  project_members: ProjectMembersTable
  access_tokens: AccessTokensTable
  sessions: SessionsTable
  login_flows: LoginFlowsTable
  hub_settings: HubSettingsTable
}

export type {Generated}
