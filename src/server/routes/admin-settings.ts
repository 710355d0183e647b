import type {FastifyInstance, FastifyRequest} from 'fastify'
import {AppError} from '../../api/app-error.js'
import {adminPermissions, requireAdmin} from '../../domain/settings/admin-access.js'
import {hubNameOf} from '../../domain/settings/hub-name.js'
import type {SettingsService} from '../../domain/settings/settings-service.js'
import {ctxOf} from '../plugins/auth.js'

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1'])

function requireLoopback(request: FastifyRequest) {
  const addr = request.socket.remoteAddress ?? ''
  if (!LOOPBACK.has(addr) && !addr.startsWith('127.')) throw new AppError('not_loopback', 'this route answers only requests from the Hub\'s own host', {remoteAddress: addr})
}

const sectionParam = {type: 'object', required: ['section'], properties: {section: {type: 'string', minLength: 1, maxLength: 100}}} as const

/**
 * Admin settings API: server-config (GET, PUT, section reset), maintenance, profiling, admin
 * status, and the loopback system routes. Every admin route but status needs a system admin on
 * an interactive session or the dev credential (domain/settings/admin-access.ts).
 */
export function adminSettingsRoutes(settings: SettingsService, extra: {notifications?: () => Promise<unknown>} = {}) {
  return async (app: FastifyInstance) => {
    app.get('/api/v1/admin/server-config', async (request) => {
      requireAdmin(ctxOf(request))
      return settings.view()
    })
    app.put('/api/v1/admin/server-config', async (request) => {
      const ctx = ctxOf(request)
      requireAdmin(ctx)
      return settings.save(ctx, request.body)
    })
    app.delete('/api/v1/admin/server-config/sections/:section', {schema: {params: sectionParam}}, async (request) => {
      const ctx = ctxOf(request)
      requireAdmin(ctx)
      return settings.reset(ctx, (request.params as {section: string}).section)
    })

    app.get('/api/v1/admin/maintenance', async (request) => {
      requireAdmin(ctxOf(request))
      return settings.maintenance.get()
    })
    app.put(
      '/api/v1/admin/maintenance',
      {schema: {body: {type: 'object', additionalProperties: false, properties: {enabled: {type: 'boolean'}, message: {type: 'string', maxLength: 2000}}}}},
      async (request) => {
        const ctx = ctxOf(request)
        requireAdmin(ctx)
        return settings.maintenance.put(ctx, request.body as {enabled?: boolean; message?: string})
      },
    )

    app.get('/api/v1/admin/status', async (request) => {
      const ctx = ctxOf(request)
      const p = ctx.principal
      const m = settings.maintenance.get()
      return {
        principal: {kind: p.kind, id: p.id},
        credentialKind: ctx.credentialKind,
        systemAdmin: p.kind === 'user' && p.systemAdmin,
        mode: settings.view().mode,
        // Shown in the web client's header; any signed-in user reads this route.
        hubName: hubNameOf(settings.resolved()),
        maintenance: {enabled: m.enabled, break_glass: m.break_glass},
        permissions: adminPermissions(ctx),
        // Webhook delivery counts and recent failures: for system admins only (URLs are settings).
        ...(p.kind === 'user' && p.systemAdmin && extra.notifications && {notifications: await extra.notifications()}),
      }
    })

    app.get('/api/v1/admin/profiling', async (request) => {
      requireAdmin(ctxOf(request))
      const r = settings.readinessMarks()
      return {readiness_marks: r.value, revision: r.revision}
    })
    app.put(
      '/api/v1/admin/profiling',
      {schema: {body: {type: 'object', required: ['readiness_marks'], additionalProperties: false, properties: {readiness_marks: {type: ['boolean', 'null']}, revision: {type: 'integer', minimum: 0}}}}},
      async (request) => {
        const ctx = ctxOf(request)
        requireAdmin(ctx)
        const body = request.body as {readiness_marks: boolean | null; revision?: number}
        const revisions = body.revision === undefined ? undefined : {profiling: body.revision}
        if (body.readiness_marks === null) {
          if (revisions && revisions.profiling !== settings.readinessMarks().revision) {
            throw new AppError('revision_conflict', 'the profiling section changed since it was loaded', {section: 'profiling', expected: revisions.profiling, current: settings.readinessMarks().revision})
          }
          await settings.reset(ctx, 'profiling')
        } else await settings.writeUnits(ctx, {'profiling.readiness_marks': body.readiness_marks}, revisions)
        const r = settings.readinessMarks()
        return {readiness_marks: r.value, revision: r.revision}
      },
    )
    app.get('/api/v1/profiling', async (request) => {
      ctxOf(request)
      return {readinessMarks: settings.readinessMarks().value}
    })

    // Loopback: local tools set the workstation's runtime profiles and image registry.
    app.put(
      '/api/v1/system/runtime',
      {schema: {body: {type: 'object', additionalProperties: false, minProperties: 1, properties: {profiles: {type: 'object'}, runtimes: {type: 'object'}, revisions: {type: 'object', additionalProperties: {type: 'integer'}}}}}},
      async (request) => {
        requireLoopback(request)
        const ctx = ctxOf(request)
        requireAdmin(ctx)
        const b = request.body as {profiles?: object; runtimes?: object; revisions?: Record<string, number>}
        const units = {...(b.runtimes && {runtimes: b.runtimes}), ...(b.profiles && {profiles: b.profiles})}
        if (!Object.keys(units).length) throw new AppError('invalid_request', 'send profiles or runtimes')
        return {sections: await settings.writeUnits(ctx, units, b.revisions)}
      },
    )
    app.put(
      '/api/v1/system/registry',
      {schema: {body: {type: 'object', required: ['image_registry'], additionalProperties: false, properties: {image_registry: {type: 'string', maxLength: 500}, revision: {type: 'integer', minimum: 0}}}}},
      async (request) => {
        requireLoopback(request)
        const ctx = ctxOf(request)
        requireAdmin(ctx)
        const b = request.body as {image_registry: string; revision?: number}
        return {sections: await settings.writeUnits(ctx, {image_registry: b.image_registry}, b.revision === undefined ? undefined : {image_registry: b.revision})}
      },
    )
  }
}
