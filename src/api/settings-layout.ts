/** A Layer-1 section's metadata in `GET /api/v1/admin/server-config` (`sections`). */
export interface SectionMeta {
  /** `seeded` follows bootstrap (revision 0 when no row was written yet); `managed` was saved. */
  origin: 'seeded' | 'managed'
  source: string
  revision: number
  updated_by: string | null
  updated_at: string | null
  /** Managed section whose bootstrap value differs (the bootstrap value no longer applies). */
  superseded?: boolean
}

/**
 * One field of the web client's settings form (GET /api/v1/admin/server-config/layout). Shared
 * by the Hub (src/server/web/settings-layout.ts) and the client (web/).
 */
export interface LayoutField {
  key: string
  /** 0: bootstrap; 1: a database section; 'file': bootstrap key with no database home. */
  layer: 0 | 1 | 'file'
  section: string | null
  /** How the page edits it: a leaf kind, or `json` for lists, maps and open values. */
  kind: 'string' | 'int' | 'float' | 'bool' | 'json'
  doc: string
  /** Never saved from the page: read-only defaults, Hub-owned and workstation-forced keys. */
  readOnly: boolean
  options?: string[]
}
