import type {Generated} from 'kysely'
import type {AgentEventsTable, NotificationDeliveriesTable} from './schema-events.js'
import type {ApprovalsTable} from './schema-approvals.js'
import type {DelegationAdoptionsTable, DelegationEdgesTable} from './schema-delegation.js'

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
  /** Built-in Hub role (domain/authz/hub-roles.ts); null: none. Migration 0011. */
  hub_role: string | null
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
  /** Absolute path of the project's git checkout on the co-located broker's machine. */
  local_path: Generated<string | null>
  clone_url: Generated<string | null>
  description: string
  default_broker_id: string | null
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

export interface ProjectSecretsTable {
  project_id: string
  scope: string
  user_id: string
  key: string
  value_enc: string
  written_by_kind: string
  written_by_id: string
  updated_at: string
}

export interface SettingsSectionsTable {
  section: string
  value: string
  origin: string
  source: string
  revision: number
  updated_by: string | null
  updated_at: string
}

export interface HubSettingsTable {
  key: string
  value: string
  updated_at: string
}

export interface BrokersTable {
  id: string
  name: string
  status: string
  secret: string | null
  capabilities: string
  runtimes: string
  version: string
  colocated: number
  created_by: string
  created_at: string
  updated_at: string
  joined_at: string | null
  last_seen_at: string | null
}

export interface BrokerJoinTokensTable {
  id: string
  broker_id: string
  token_hash: string
  created_at: string
  expires_at: string
  used_at: string | null
}

export interface AgentsTable {
  id: string
  project_id: string
  name: string
  broker_id: string | null
  phase: string
  activity: string | null
  detail: string
  harness_config: string
  template: string | null
  task: string | null
  role: string
  runtime: string | null
  runtime_ref: string | null
  config: string
  error: string | null
  created_by_kind: string
  created_by_id: string
  created_at: string
  updated_at: string
  last_heartbeat_at: string | null
  deleted_at: string | null
  message_mode: string
  /** Facts of `config` the delegation planner reads (agent-config-facts.ts), written with it. */
  config_readable: Generated<number>
  applied_role: Generated<string | null>
  assign_mode_service_account: Generated<number>
  /** JSON `{path, branch, baseRef, baseCommit}` of the agent's git workspace; null before dispatch or without one. */
  workspace: Generated<string | null>
  /** Image and sandbox the agent was dispatched with (issue: runtime fixed per agent). */
  image: Generated<string | null>
  sandbox: Generated<string | null>
  /** Turns ended (for `max_turns`). */
  turns: Generated<number>
  /** JSON usage the harness reported: tokens, model calls, cost. */
  usage: Generated<string | null>
  /** Teams: the parent agent (ID and name), or null for a root. */
  parent_id: Generated<string | null>
  parent_name: Generated<string | null>
  /** Teams: JSON of the agent's effective limits (its subtree's budget); null before migration 0019. */
  limits: Generated<string | null>
  /** Teams, attempts: the group, the check command and the last check's result (JSON); migration 0020. */
  group_name: Generated<string | null>
  check_command: Generated<string | null>
  check_result: Generated<string | null>
}

export interface AgentTokensTable {
  id: string
  agent_id: string
  token_hash: string
  scopes: string
  created_at: string
  expires_at: string
  revoked_at: string | null
}

export interface AgentLogArchivesTable {
  agent_id: string
  content: string
  size: number
  created_at: string
}

export interface TemplatesTable {
  id: string
  name: string
  scope: string
  description: string
  current_version: number
  created_by: string
  created_at: string
  updated_at: string
}

export interface TemplateVersionsTable {
  template_id: string
  seq: number
  manifest: string
  created_by: string
  created_at: string
}

export interface TemplateFilesTable {
  template_id: string
  seq: number
  path: string
  content: string
}

export interface ArtifactsTable {
  id: string
  title: string
  owner_kind: string
  owner_id: string
  project_id: string
  current_version: number
  created_at: string
  updated_at: string
}

export interface ArtifactVersionsTable {
  artifact_id: string
  seq: number
  entry_path: string
  created_by_kind: string
  created_by_id: string
  created_at: string
}

export interface ArtifactFilesTable {
  artifact_id: string
  seq: number
  path: string
  /** bigint: PostgreSQL returns it as text; the repository converts. */
  size: number | string
  sha256: string
  media_type: string
  blob_key: string
}

export interface ArtifactGrantsTable {
  artifact_id: string
  grantee_kind: string
  grantee_id: string
  granted_by: string
  created_at: string
}

export interface MessagesTable {
  id: string
  project_id: string
  agent_id: string
  broadcast_id: string | null
  sender_kind: string
  sender_id: string
  ingress: string
  body: string
  delivery: string
  error: string | null
  created_at: string
  delivered_at: string | null
}

export interface SchedulesTable {
  id: string
  project_id: string
  agent_id: string
  kind: string
  every_ms: number | null
  next_at: string
  payload: string
  status: string
  created_by_kind: string
  created_by_id: string
  created_at: string
  updated_at: string
}

export interface AuditRecordsTable {
  id: string
  kind: string
  actor_kind: string
  actor_id: string
  project_id: string | null
  target: string | null
  details: string
  created_at: string
}

export interface ProjectAnnotationsTable {
  project_id: string
  key: string
  value: string
  updated_by: string
  updated_at: string
}

export interface BrokerNoncesTable {
  nonce: string
  expires_at: string
}

/** Each agent's block of ports on its broker (migration 0023). */
export interface AgentPortsTable {
  agent_id: string
  broker_id: string
  first_port: number
  created_at: string
}

export interface Database {
  approvals: ApprovalsTable
  agent_events: AgentEventsTable
  notification_deliveries: NotificationDeliveriesTable
  broker_nonces: BrokerNoncesTable
  agent_ports: AgentPortsTable
  delegation_edges: DelegationEdgesTable
  delegation_adoptions: DelegationAdoptionsTable
  project_annotations: ProjectAnnotationsTable
  messages: MessagesTable
  schedules: SchedulesTable
  audit_records: AuditRecordsTable
  artifacts: ArtifactsTable
  artifact_versions: ArtifactVersionsTable
  artifact_files: ArtifactFilesTable
  artifact_grants: ArtifactGrantsTable
  brokers: BrokersTable
  broker_join_tokens: BrokerJoinTokensTable
  agents: AgentsTable
  agent_tokens: AgentTokensTable
  agent_log_archives: AgentLogArchivesTable
  templates: TemplatesTable
  template_versions: TemplateVersionsTable
  template_files: TemplateFilesTable
  users: UsersTable
  projects: ProjectsTable
  project_members: ProjectMembersTable
  access_tokens: AccessTokensTable
  sessions: SessionsTable
  login_flows: LoginFlowsTable
  hub_settings: HubSettingsTable
  settings_sections: SettingsSectionsTable
  project_secrets: ProjectSecretsTable
}

export type {Generated}
export type {AgentEventsTable, NotificationDeliveriesTable} from './schema-events.js'
export type {DelegationAdoptionsTable, DelegationEdgesTable} from './schema-delegation.js'
