import type {FastifyInstance, FastifyReply, FastifyRequest} from 'fastify'
import {AppError} from '../../api/app-error.js'
import type {ArtifactsService, FileDelivery} from '../../domain/artifacts/artifacts-service.js'
import {contentDisposition, contentTypeHeader} from '../../domain/artifacts/media-types.js'
import {ctxOf} from '../plugins/auth.js'

const idParam = {type: 'object', required: ['id'], properties: {id: {type: 'string', minLength: 1, maxLength: 128}}} as const
const versionParams = {
  type: 'object',
  required: ['id', 'seq'],
  properties: {id: {type: 'string', minLength: 1, maxLength: 128}, seq: {type: 'integer', minimum: 1}},
} as const
const streamQuery = {type: 'object', properties: {stream: {type: 'string', enum: ['1', 'true', '0', 'false']}}} as const

/** The sandbox that streamed artifact bytes are served under: nothing runs, nothing loads. */
export const FILE_CSP = "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'"

/** Does an If-None-Match header name this strong ETag (or `*`)? */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false
  return header.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '')
    return tag === '*' || tag === etag
  })
}

/**
 * Writes a file delivery. Every answer carries Content-Disposition (inline only for the types
 * the spec lists) and nosniff; streamed bytes also a sandboxing CSP and the SHA-256 as ETag.
 */
export async function sendFile(request: FastifyRequest, reply: FastifyReply, d: FileDelivery) {
  const {entry} = d
  reply.header('x-content-type-options', 'nosniff')
  reply.header('content-disposition', contentDisposition(entry.mediaType, entry.path))
  if (d.kind === 'redirect') {
    reply.header('cache-control', 'no-store')
    return reply.redirect(d.url, 302)
  }
  const etag = `"${entry.sha256}"`
  reply.header('etag', etag)
  reply.header('cache-control', 'private, no-cache')
  reply.header('content-security-policy', FILE_CSP)
  if (etagMatches(request.headers['if-none-match'], etag)) return reply.code(304).send()
  reply.header('content-type', contentTypeHeader(entry.mediaType))
  if (request.method === 'HEAD') return reply.header('content-length', String(entry.size)).send()
  const {stream, size} = await d.open()
  // The stored length, not the recorded one: a blob changed behind the Hub's back is served
  // as it is, and clients checking the recorded SHA-256 notice.
  reply.header('content-length', String(size))
  return reply.send(stream)
}

/** Publish a new artifact, or a new version of one, from the raw request body. */
function uploadRoutes(artifacts: ArtifactsService) {
  return async (scope: FastifyInstance) => {
    // The body is the file: no parser reads it; the handler streams request.raw to storage.
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined))

    const uploadOf = (request: FastifyRequest, name: string) => {
      const raw = request.raw
      const ac = new AbortController()
      raw.once('close', () => {
        if (!raw.complete) ac.abort(new AppError('invalid_request', 'the upload was interrupted'))
      })
      const len = request.headers['content-length']
      const sha = request.headers['x-content-sha256']
      if (len !== undefined && !/^\d+$/.test(len)) throw new AppError('invalid_request', 'Content-Length must be a whole number')
      return {name, body: raw, size: len === undefined ? undefined : Number(len), sha256: Array.isArray(sha) ? sha[0] : sha, signal: ac.signal}
    }

    /** A client that went away mid-upload is reported as such, not as an internal error. */
    const interrupted = <T>(up: {signal: AbortSignal}, p: Promise<T>) =>
      p.catch((err) => {
        if (up.signal.aborted && !(err instanceof AppError)) throw up.signal.reason
        throw err
      })

    scope.post(
      '/api/v1/artifacts',
      {
        schema: {
          querystring: {
            type: 'object',
            required: ['name'],
            properties: {name: {type: 'string', minLength: 1, maxLength: 1024}, title: {type: 'string', maxLength: 500}, scope: {type: 'string', minLength: 1, maxLength: 200}},
          },
        },
      },
      async (request, reply) => {
        const q = request.query as {name: string; title?: string; scope?: string}
        const up = uploadOf(request, q.name)
        const result = await interrupted(up, artifacts.publish(ctxOf(request), {...up, title: q.title, scope: q.scope}))
        return reply.code(201).send(result)
      },
    )

    scope.post(
      '/api/v1/artifacts/:id/versions',
      {schema: {params: idParam, querystring: {type: 'object', required: ['name'], properties: {name: {type: 'string', minLength: 1, maxLength: 1024}}}}},
      async (request, reply) => {
        const {id} = request.params as {id: string}
        const q = request.query as {name: string}
        const up = uploadOf(request, q.name)
        const result = await interrupted(up, artifacts.publishVersion(ctxOf(request), id, up))
        return reply.code(201).send(result)
      },
    )
  }
}

/** Artifacts: `/api/v1/artifacts` (see docs/api.md). */
export function artifactRoutes(artifacts: ArtifactsService) {
  return async (app: FastifyInstance) => {
    await app.register(uploadRoutes(artifacts))

    // The web client's artifact list: what the caller may read in one project, with versions.
    app.get('/api/v1/projects/:projectId/artifacts', {schema: {params: {type: 'object', required: ['projectId'], properties: {projectId: {type: 'string', minLength: 1, maxLength: 200}}}}}, async (request) => ({
      artifacts: await artifacts.listInProject(ctxOf(request), (request.params as {projectId: string}).projectId),
    }))

    app.get('/api/v1/artifacts/:id', {schema: {params: idParam}}, async (request) => artifacts.get(ctxOf(request), (request.params as {id: string}).id))

    app.get('/api/v1/artifacts/:id/versions/:seq', {schema: {params: versionParams}}, async (request) => {
      const {id, seq} = request.params as {id: string; seq: number}
      return artifacts.get(ctxOf(request), id, seq)
    })

    const wantsStream = (request: FastifyRequest) => ['1', 'true'].includes((request.query as {stream?: string}).stream ?? '')

    app.get('/api/v1/artifacts/:id/files/*', {schema: {querystring: streamQuery}}, async (request, reply) => {
      const p = request.params as {id: string; '*': string}
      return sendFile(request, reply, await artifacts.file(ctxOf(request), p.id, null, p['*'], {preferRedirect: !wantsStream(request)}))
    })

    app.get('/api/v1/artifacts/:id/versions/:seq/files/*', {schema: {querystring: streamQuery}}, async (request, reply) => {
      const p = request.params as {id: string; seq: string; '*': string}
      if (!/^[1-9]\d{0,9}$/.test(p.seq)) throw new AppError('validation_error', 'params.seq must be a positive integer', {fields: [{path: 'params.seq', message: 'must be a positive integer'}]})
      return sendFile(request, reply, await artifacts.file(ctxOf(request), p.id, Number(p.seq), p['*'], {preferRedirect: !wantsStream(request)}))
    })

    app.delete('/api/v1/artifacts/:id', {schema: {params: idParam}}, async (request) => {
      const {artifact} = await artifacts.delete(ctxOf(request), (request.params as {id: string}).id)
      return {artifact}
    })

    app.get('/api/v1/artifacts/:id/grants', {schema: {params: idParam}}, async (request) => ({
      grants: await artifacts.grants(ctxOf(request), (request.params as {id: string}).id),
    }))

    app.post(
      '/api/v1/artifacts/:id/grants',
      {
        schema: {
          params: idParam,
          body: {
            type: 'object',
            additionalProperties: false,
            properties: {userId: {type: 'string', minLength: 1}, email: {type: 'string', minLength: 3}, projectId: {type: 'string', minLength: 1}},
            oneOf: [{required: ['userId']}, {required: ['email']}, {required: ['projectId']}],
          },
        },
      },
      async (request) => ({grants: await artifacts.grant(ctxOf(request), (request.params as {id: string}).id, request.body as never)}),
    )

    app.delete(
      '/api/v1/artifacts/:id/grants/:kind/:granteeId',
      {
        schema: {
          params: {
            type: 'object',
            required: ['id', 'kind', 'granteeId'],
            properties: {id: {type: 'string', minLength: 1}, kind: {type: 'string', enum: ['user', 'project']}, granteeId: {type: 'string', minLength: 1}},
          },
        },
      },
      async (request) => {
        const p = request.params as {id: string; kind: 'user' | 'project'; granteeId: string}
        return {grants: await artifacts.revoke(ctxOf(request), p.id, p.kind, p.granteeId)}
      },
    )
  }
}
