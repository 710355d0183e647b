import {AppError} from '../../api/app-error.js'
import type {Bootstrap} from '../../config/bootstrap.js'
import type {Store} from '../../store/store.js'
import type {CallContext} from '../authz/context.js'

export const MAINTENANCE_KEY = 'maintenance'

interface Row {
  enabled: boolean
  message: string
  updated_by: string
  updated_at: string
}

export interface MaintenanceState {
  enabled: boolean
  message: string
  /** Workstation started with SVC_SERVER_ADMIN_MODE / server.admin_mode: this run stays in maintenance. */
  break_glass: boolean
  updated_by: string | null
  updated_at: string | null
}

export interface Maintenance {
  get(): MaintenanceState
  /** True while non-admin mutating requests must be refused. */
  active(): boolean
  put(ctx: CallContext, body: {enabled?: boolean; message?: string}): Promise<MaintenanceState>
  reload(): Promise<void>
}

/**
 * Maintenance mode (spec "Maintenance state"): a row in `hub_settings` on every driver. Until a
 * row exists the start-up state applies (`server.admin_mode`, `SVC_SERVER_ADMIN_MODE`). On
 * hosted Hubs the row wins over per-node configuration; on workstation Hubs a start-up state of
 * on is break-glass: this run stays in maintenance whatever the row says.
 */
export function createMaintenance(o: {store: Store; bootstrap: Bootstrap; now: () => string; publish: () => Promise<void>}): Maintenance {
  const startup = o.bootstrap.values['server.admin_mode'] === true
  const breakGlass = o.bootstrap.mode === 'workstation' && startup
  let row: Row | null = null
  const get = (): MaintenanceState => ({
    enabled: breakGlass || (row ? row.enabled : startup),
    message: row?.message ?? '',
    break_glass: breakGlass,
    updated_by: row?.updated_by ?? null,
    updated_at: row?.updated_at ?? null,
  })
  return {
    get,
    active: () => get().enabled,
    async reload() {
      row = await o.store.hubSettings.get<Row>(MAINTENANCE_KEY)
    },
    async put(ctx, body) {
      if (body.enabled !== undefined && typeof body.enabled !== 'boolean') throw new AppError('validation_error', 'enabled: expected true or false')
      if (body.message !== undefined && typeof body.message !== 'string') throw new AppError('validation_error', 'message: expected a string')
      const current = await o.store.hubSettings.get<Row>(MAINTENANCE_KEY)
      // Omitted `enabled`: keep the row's value; with no row, store the current state (on during break-glass).
      const enabled = body.enabled ?? (current ? current.enabled : get().enabled)
      const next: Row = {enabled, message: body.message ?? current?.message ?? '', updated_by: `${ctx.principal.kind}:${ctx.principal.id}`, updated_at: o.now()}
      await o.store.hubSettings.put(MAINTENANCE_KEY, next, next.updated_at)
      row = next
      await o.publish()
      return get()
    },
  }
}
