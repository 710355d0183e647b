import type {Mode} from '../config/bootstrap.js'

/** What the domain needs to know of the Hub's configuration (built from bootstrap in main.ts). */
export interface HubConfig {
  mode: Mode
  devMode: boolean
  /** The dev credential accepted by this Hub (null when dev mode is off). */
  devToken: string | null
  adminEmails: string[]
  userAccessMode: string
  authorizedDomains: string[]
  sessionTtlMs: number
  publicUrl: string
  oidc: {issuerUrl: string; clientId: string; clientSecret: string; scopes: string[]} | null
  /** Largest accepted artifact file in bytes (`artifacts.max_file_bytes`). */
  artifactMaxFileBytes: number
  /** How long a deleted agent's output stays readable by ID (`server.retention.deleted_agent_logs`; default 7 days). */
  deletedAgentLogsRetentionMs?: number
}

export const DEV_USER = {id: 'dev-user', email: 'dev@localhost', displayName: 'Developer'} as const
