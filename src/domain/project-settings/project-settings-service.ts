import {AppError} from '../../api/app-error.js'
import type {CallContext} from '../authz/context.js'
import {iso} from '../shared/clock.js'
import type {Deps} from '../deps.js'
import type {ProjectsService} from '../projects/projects-service.js'
import {BY_FIELD, PROJECT_SETTINGS} from './registry.js'

/** Hub-level defaults by top-level settings key; null when they cannot be read. */
export type HubDefaultsSource = () => Promise<Record<string, unknown> | null>

export interface SettingEntry {
  projectSet: boolean
  projectValue: string | null
  hubDefault: 'present' | 'absent' | 'unknown'
}

/**
 * Project settings: the registered `svc/` annotations, read and written as camelCase fields, and
 * the resolved view that says what the project sets and whether a hub default exists — never a
 * hub default's value, never an effective value.
 */
export function createProjectSettingsService(deps: Deps, projects: ProjectsService, hubDefaults: HubDefaultsSource) {
  const {store, clock} = deps

  function toObject(annotations: Record<string, string>): Record<string, unknown> {
    const out: Record<string, unknown> = {}
    for (const def of PROJECT_SETTINGS) {
      const raw = annotations[def.key]
      let v: unknown = null
      if (raw !== undefined) {
        try {
          v = def.parse(raw)
        } catch {
          v = raw
        }
      }
      out[def.field] = v
    }
    return out
  }

  return {
    async get(ctx: CallContext, projectRef: string): Promise<Record<string, unknown>> {
      const project = await projects.load(ctx, projectRef, 'project.read')
      return toObject(await store.projectAnnotations.all(project.id))
    },

    /** Partial update: each given field is set; null clears it; unknown fields are refused. */
    async update(ctx: CallContext, projectRef: string, patch: Record<string, unknown>): Promise<Record<string, unknown>> {
      const project = await projects.load(ctx, projectRef, 'project.update')
      const changes: Record<string, string | null> = {}
      const fields: Array<{path: string; message: string}> = []
      for (const [field, value] of Object.entries(patch)) {
        const def = BY_FIELD.get(field)
        if (!def) {
          fields.push({path: field, message: 'is not a project setting'})
          continue
        }
        if (value === null) {
          changes[def.key] = null
          continue
        }
        try {
          changes[def.key] = def.toRaw(value)
        } catch (err) {
          fields.push({path: field, message: (err as Error).message})
        }
      }
      if (fields.length) throw new AppError('validation_error', `invalid project settings: ${fields.map((f) => `${f.path} ${f.message}`).join('; ')}`, {fields})
      if (Object.keys(changes).length === 0) throw new AppError('invalid_request', 'the body changes nothing: send the settings to set, or null to clear one')
      await store.transaction((tx) => tx.projectAnnotations.apply(project.id, changes, ctx.principal.id, iso(clock.now())))
      return toObject(await store.projectAnnotations.all(project.id))
    },

    /** Every registered setting, always: `{projectSet, projectValue, hubDefault}`. */
    async resolved(ctx: CallContext, projectRef: string): Promise<{project: Record<string, unknown>; settings: Record<string, SettingEntry>}> {
      const project = await projects.load(ctx, projectRef, 'project.read')
      const annotations = await store.projectAnnotations.all(project.id)
      let hub: Record<string, unknown> | null
      try {
        hub = await hubDefaults()
      } catch {
        hub = null
      }
      const settings: Record<string, SettingEntry> = {}
      for (const def of PROJECT_SETTINGS) {
        const raw = annotations[def.key]
        const hv = hub?.[def.hubKey]
        settings[def.key] = {
          projectSet: raw !== undefined,
          projectValue: raw ?? null,
          hubDefault: hub === null ? 'unknown' : hv !== undefined && hv !== null && hv !== '' ? 'present' : 'absent',
        }
      }
      return {project: toObject(annotations), settings}
    },

    /** The raw annotations of a project, for agent creation (no permission check: the caller did it). */
    annotations: (projectId: string) => store.projectAnnotations.all(projectId),
  }
}

export type ProjectSettingsService = ReturnType<typeof createProjectSettingsService>
