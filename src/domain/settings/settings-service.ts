import {isDeepStrictEqual} from 'node:util'
import {AppError} from '../../api/app-error.js'
import type {Bootstrap} from '../../config/bootstrap.js'
import {SERVER_KEYS} from '../../config/schema.js'
import type {SectionMeta} from '../../api/settings-layout.js'
import type {SectionRow} from '../../store/repositories/settings-sections.js'
import type {Store} from '../../store/store.js'
import {agentSettingsFromTree, type AgentSettings} from '../agents/agent-settings.js'
import type {CallContext} from '../authz/context.js'
import type {Clock} from '../shared/clock.js'
import type {Logger} from 'pino'
import {applicableDefaults, NO_CLOUD_IAM, type CloudIdentityPolicy} from './cloud-identity.js'
import {applyPatch, classOf, DATABASE_ONLY_SECTIONS, flatten, READ_ONLY_KEYS, SECTIONS, sectionOf, unflatten, type Tree} from './keys.js'
import {createMaintenance, type Maintenance} from './maintenance.js'
import {createSaver, type SaveResult, type SectionResult} from './save.js'
import {validateSections} from './validate.js'

export const SETTINGS_CHANNEL = 'svc_settings'
/** Backstop when a notification is lost (spec: 60-second poll). */
export const POLL_MS = 60_000
export const TOKEN_MASK = '********'

export interface SettingsDeps {
  store: Store
  clock: Clock
  logger: Logger
  bootstrap: Bootstrap
  env: NodeJS.ProcessEnv
  /** Applies a new `server.log_level` at once (save rule 1). */
  setLogLevel?: (level: string) => void
  /**
   * Schedules the poll backstop: calls `tick` periodically, returns a stop function. Default:
   * every POLL_MS. A seam so tests drive the poll themselves instead of waiting a minute.
   */
  schedulePoll?: (tick: () => Promise<void>) => () => void
  /** Decides whether a hub-level cloud identity `Assign` is acceptable; default NO_CLOUD_IAM. */
  cloudIdentity?: CloudIdentityPolicy
}

const everyPollMs = (tick: () => Promise<void>) => {
  const timer = setInterval(() => void tick(), POLL_MS)
  timer.unref()
  return () => clearInterval(timer)
}

export type {SectionMeta}

export interface SettingsService {
  /** Seeds and re-syncs sections (origin state machine), loads the cache, starts listening and polling. */
  init(): Promise<void>
  /** Reads every section and the maintenance row again (event, poll, tests). */
  reload(): Promise<void>
  /** The operational settings tree: bootstrap merge with Layer-1 sections from the database. */
  resolved(): Tree
  agentSettings(): AgentSettings
  readinessMarks(): {value: boolean; revision: number}
  /** GET /api/v1/admin/server-config. */
  view(): Tree
  save(ctx: CallContext, body: unknown): Promise<SaveResult>
  /** Reset to bootstrap: deletes the section's row. */
  reset(ctx: CallContext, section: string): Promise<{section: string; deleted: boolean; sections: Record<string, SectionMeta>}>
  /** Writes Layer-1 units directly (profiling, loopback system routes), same locking and event. */
  writeUnits(ctx: CallContext | null, units: Tree, revisions?: Record<string, number>): Promise<Record<string, SectionResult>>
  /** Save rule 5: records the co-located broker's identity (GET shows it; a workstation Hub writes it to its file). */
  recordColocatedBroker(brokerId: string, secret: string): Promise<void>
  maintenance: Maintenance
  /** Called after each cache refresh (tests, bench). */
  onChange(fn: () => void): () => void
  close(): Promise<void>
}

/** Who changed something, as recorded in `updated_by`. */
export const actorOf = (ctx: CallContext | null) => (ctx ? `${ctx.principal.kind}:${ctx.principal.id}` : 'system')

export function createSettingsService(deps: SettingsDeps): SettingsService {
  const {store, bootstrap, logger} = deps
  const now = () => deps.clock.now().toISOString()
  let rows = new Map<string, SectionRow>()
  const listeners = new Set<() => void>()
  let cachedResolved: Tree | null = null
  let unsubscribe: (() => void) | null = null
  let stopPoll: (() => void) | null = null

  /** Bootstrap as unit keys: file tree, then the typed bootstrap values (env, defaults, forced). */
  const bootstrapFlat = (): Tree => {
    const out = flatten(bootstrap.tree)
    for (const [k, v] of Object.entries(bootstrap.values)) out[k] = v
    return out
  }
  const BOOT = bootstrapFlat()

  /** The seed of a section: its bootstrap units (never a read-only key, never a database-only section). */
  const seedOf = (section: string): Tree => {
    if (DATABASE_ONLY_SECTIONS.has(section)) return {}
    const out: Tree = {}
    for (const [k, v] of Object.entries(BOOT)) if (sectionOf(k) === section && !READ_ONLY_KEYS.has(k)) out[k] = v
    return out
  }
  const sourceOf = (section: string): string => {
    const origins = Object.entries(bootstrap.origins).filter(([k]) => sectionOf(k) === section).map(([, o]) => o)
    const inFile = Object.keys(flatten(bootstrap.tree)).some((k) => sectionOf(k) === section)
    if (origins.includes('env')) return 'environment'
    if (inFile) return 'settings_file'
    if (origins.includes('seed')) return 'seed_variable'
    return 'defaults'
  }
  const effectiveOf = (section: string): Tree => rows.get(section)?.value ?? seedOf(section)

  const resolved = (): Tree => {
    if (cachedResolved) return cachedResolved
    const flat: Tree = {}
    for (const [k, v] of Object.entries(BOOT)) if (sectionOf(k) === null || READ_ONLY_KEYS.has(k)) flat[k] = v
    for (const s of SECTIONS) for (const [k, v] of Object.entries(effectiveOf(s))) flat[k] = v
    cachedResolved = unflatten(flat)
    return cachedResolved
  }

  const sectionsMeta = (): Record<string, SectionMeta> => {
    const out: Record<string, SectionMeta> = {}
    for (const s of SECTIONS) {
      const r = rows.get(s)
      out[s] = r
        ? {origin: r.origin, source: r.source, revision: r.revision, updated_by: r.updatedBy, updated_at: r.updatedAt, ...(r.origin === 'managed' && !DATABASE_ONLY_SECTIONS.has(s) && {superseded: !isDeepStrictEqual(r.value, seedOf(s))})}
        : // No row yet: the section tracks bootstrap, which the spec calls seeded.
          {origin: 'seeded', source: DATABASE_ONLY_SECTIONS.has(s) ? 'defaults' : sourceOf(s), revision: 0, updated_by: null, updated_at: null}
    }
    return out
  }

  const refresh = (list: SectionRow[]) => {
    rows = new Map(list.map((r) => [r.section, r]))
    cachedResolved = null
    for (const fn of listeners) fn()
  }

  // Reloads overlap (after a write, on another replica's event, on the poll) and their reads can
  // answer out of order: only a reload started after the last one applied may replace the rows,
  // else an older read would put a save's own write out of view (and the next save, comparing
  // against that view, would take a change for a no-op).
  let reloadsStarted = 0
  let reloadApplied = 0
  const reload = async () => {
    const n = ++reloadsStarted
    const [list] = await Promise.all([store.settingsSections.list(), maintenance.reload()])
    if (n < reloadApplied) return
    reloadApplied = n
    refresh(list)
  }

  const publish = (payload: Record<string, unknown>) =>
    store.events.publish(SETTINGS_CHANNEL, payload).catch((err) => logger.warn({err}, 'settings change event not sent; other replicas pick it up at the next poll'))

  const maintenance = createMaintenance({store, bootstrap, now, publish: () => publish({maintenance: true})})

  /** The origin state machine at boot: seed missing sections, re-sync changed seeded ones. */
  const seed = async () => {
    for (const [k, o] of Object.entries(bootstrap.origins)) {
      if (o === 'env' && sectionOf(k)) logger.warn({key: k}, `SVC_SERVER_* on the Layer-1 key ${k} only changes its seed and fallback, never a saved value (deprecated: use SVC_SEED_* or the admin API)`)
    }
    for (const s of SECTIONS) {
      if (DATABASE_ONLY_SECTIONS.has(s)) continue
      const value = seedOf(s)
      const row = await store.settingsSections.get(s)
      const base = {section: s, value, origin: 'seeded' as const, source: sourceOf(s), updatedBy: 'bootstrap', updatedAt: now()}
      if (!row) {
        await store.settingsSections.insert(base)
      } else if (row.origin === 'seeded') {
        // Unchanged: no write and no revision bump.
        if (!isDeepStrictEqual(row.value, value)) await store.settingsSections.update(base, row.revision)
      } else if (!isDeepStrictEqual(row.value, value)) {
        logger.info({section: s}, `settings section ${s} is managed in the database; its bootstrap value differs and is superseded (reset it to follow bootstrap again)`)
      }
    }
  }

  const saver = createSaver({
    deps,
    now,
    effectiveOf,
    seedOf,
    view: () => view(),
    rowOf: (s) => rows.get(s) ?? null,
    afterWrite: async (sections) => {
      await reload()
      if (sections.length) await publish({sections})
    },
  })

  const view = (): Tree => {
    const flat = saver.viewFlat()
    if (typeof flat['server.broker.broker_token'] === 'string' && flat['server.broker.broker_token']) flat['server.broker.broker_token'] = TOKEN_MASK
    const envOverrides = Object.entries(bootstrap.origins).filter(([, o]) => o === 'env').map(([k]) => k).sort()
    return {
      ...unflatten(flat),
      mode: bootstrap.mode,
      layer0_editable: bootstrap.mode === 'workstation',
      env_overrides: envOverrides,
      sections: sectionsMeta(),
    }
  }

  return {
    async init() {
      await seed()
      await reload()
      unsubscribe = store.events.subscribe(SETTINGS_CHANNEL, () => void reload().catch((err) => logger.warn({err}, 'settings reload failed')))
      stopPoll = (deps.schedulePoll ?? everyPollMs)(() => reload().catch((err) => logger.warn({err}, 'settings poll failed')))
    },
    reload,
    resolved,
    agentSettings: () => {
      const s = agentSettingsFromTree(resolved() as Record<string, any>)
      // An Assign seeded from bootstrap was never validated: it applies only if the policy accepts it.
      return {...s, defaults: applicableDefaults(s.defaults, deps.cloudIdentity ?? NO_CLOUD_IAM)}
    },
    readinessMarks: () => {
      const r = rows.get('profiling')
      return {value: r?.value['profiling.readiness_marks'] === true, revision: r?.revision ?? 0}
    },
    view,
    save: (ctx, body) => saver.save(ctx, body),
    async reset(ctx, section) {
      if (!SECTIONS.includes(section)) throw new AppError('not_found', `no settings section ${section}`, {sections: [...SECTIONS]})
      const deleted = await store.settingsSections.delete(section)
      logger.info({section, by: actorOf(ctx)}, 'settings section reset to bootstrap')
      await reload()
      await publish({sections: [section]})
      return {section, deleted, sections: sectionsMeta()}
    },
    async writeUnits(ctx, units, revisions) {
      const bySection: Record<string, Tree> = {}
      for (const [k, v] of Object.entries(units)) {
        const s = sectionOf(k)
        if (!s) throw new AppError('internal_error', `${k} is not a Layer-1 key`)
        bySection[s] = {...(bySection[s] ?? {}), [k]: v}
      }
      const next = Object.fromEntries(Object.entries(bySection).map(([s, u]) => [s, Object.entries(u).reduce((acc, [k, v]) => applyPatch(acc, k, v), effectiveOf(s))]))
      validateSections(next, deps.cloudIdentity)
      return saver.writeSections(ctx, bySection, revisions ?? {})
    },
    recordColocatedBroker: (brokerId, secret) => saver.recordHubOwned({'server.broker.broker_id': brokerId, 'server.broker.broker_token': secret}),
    maintenance,
    onChange(fn) {
      listeners.add(fn)
      return () => listeners.delete(fn)
    },
    async close() {
      unsubscribe?.()
      stopPoll?.()
    },
  }
}

/** Type of a value a key would load as (for read-back checks). */
export const specOf = (key: string) => SERVER_KEYS[key]
export {classOf}
