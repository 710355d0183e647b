import {randomBytes} from 'node:crypto'
import type {Readable} from 'node:stream'
import type {FastifyError, FastifyInstance, FastifyRequest} from 'fastify'
import {AppError} from '../../api/app-error.js'
import type {ArtifactsService} from '../../domain/artifacts/artifacts-service.js'
import {isMarkdown, isPageImage, isPageText} from '../../domain/artifacts/media-types.js'
import {ctxOf} from '../plugins/auth.js'
import {downloadLink, escapeHtml, renderCode, renderMarkdown, renderPage} from './artifact-page-template.js'

/** Text larger than this is offered as a download instead of being rendered. */
export const PREVIEW_BYTES = 2 * 1024 * 1024

/** The page's policy: no script at all, images only from the Hub itself or inline data. */
const pageCsp = (nonce: string) =>
  `default-src 'none'; img-src 'self' data:; style-src 'nonce-${nonce}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`

/** Reads at most PREVIEW_BYTES (a blob larger than its record is cut, not buffered whole). */
async function readText(stream: Readable): Promise<string> {
  const chunks: Buffer[] = []
  let n = 0
  for await (const c of stream as AsyncIterable<Buffer>) {
    chunks.push(c)
    n += c.length
    if (n >= PREVIEW_BYTES) {
      stream.destroy()
      break
    }
  }
  return Buffer.concat(chunks).subarray(0, PREVIEW_BYTES).toString('utf8')
}

/** A browser opening the page (not a script or the CLI fetching it): it can be sent to sign in. */
const isPageNavigation = (request: FastifyRequest) =>
  request.method === 'GET' && (request.headers['sec-fetch-mode'] === 'navigate' || /\btext\/html\b/.test(request.headers.accept ?? ''))

const errorPage = (status: number, message: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${status}</title></head><body><h1>${status}</h1><p>${escapeHtml(message)}</p></body></html>\n`

/**
 * The artifact page `/projects/<project-id>/artifacts/<id>[?version=<seq>]`, authenticated like
 * the API (bearer or the `svc_session` cookie). Errors are HTML pages here.
 */
export function artifactPageRoutes(artifacts: ArtifactsService) {
  return async (app: FastifyInstance) => {
    await app.register(async (scope) => {
      scope.setErrorHandler((err: FastifyError, request, reply) => {
        const known = err instanceof AppError ? err : err.validation ? new AppError('validation_error', err.message) : null
        // A signed-out browser goes through sign-in (the web client: dev sign-in on a
        // workstation, the identity provider on a hosted Hub) and comes back to this page.
        if (known?.code === 'unauthorized' && isPageNavigation(request)) {
          return reply.header('cache-control', 'no-store').redirect(`/?return_to=${encodeURIComponent(request.url)}`, 303)
        }
        if (!known) request.log.error({err}, 'artifact page failed')
        const status = known?.status ?? 500
        const message = known ? known.message : 'internal error; the Hub logged it under this request ID'
        return reply
          .code(status)
          .header('content-security-policy', "default-src 'none'")
          .type('text/html; charset=utf-8')
          .send(errorPage(status, `${message} (request ${request.id})`))
      })

      scope.get(
        '/projects/:projectId/artifacts/:id',
        {
          schema: {
            params: {type: 'object', required: ['projectId', 'id'], properties: {projectId: {type: 'string', minLength: 1}, id: {type: 'string', minLength: 1}}},
            querystring: {type: 'object', properties: {version: {type: 'integer', minimum: 1}}},
          },
        },
        async (request, reply) => {
          const ctx = ctxOf(request)
          const {projectId, id} = request.params as {projectId: string; id: string}
          const seq = (request.query as {version?: number}).version ?? null
          const v = await artifacts.get(ctx, id, seq)
          if (v.artifact.projectId !== projectId) throw new AppError('not_found', 'artifact not found')
          const entry = v.version.manifest[0]
          const fileUrl = `/api/v1/artifacts/${encodeURIComponent(id)}/versions/${v.version.seq}/files/${entry.path.split('/').map(encodeURIComponent).join('/')}`
          let body: string
          const tooBig = entry.size > PREVIEW_BYTES
          if (isPageImage(entry.mediaType)) {
            body = `<div class="preview"><img src="${escapeHtml(fileUrl)}?stream=1" alt="${escapeHtml(v.artifact.title)}"></div>`
          } else if ((isMarkdown(entry.mediaType) || isPageText(entry.mediaType)) && !tooBig) {
            const d = await artifacts.file(ctx, id, v.version.seq, entry.path, {preferRedirect: false})
            if (d.kind !== 'stream') throw new Error('expected a stream')
            const text = await readText((await d.open()).stream)
            body = isMarkdown(entry.mediaType) ? `<article class="markdown">${renderMarkdown(text)}</article>` : renderCode(text)
          } else {
            body = downloadLink(fileUrl, entry.path, tooBig ? 'This file is too large to show here.' : 'This file is offered as a download.')
          }
          const nonce = randomBytes(16).toString('base64')
          const html = renderPage({
            title: v.artifact.title,
            ownerLabel: await artifacts.ownerLabel(v.artifact),
            seq: v.version.seq,
            currentVersion: v.artifact.currentVersion,
            ref: v.artifact.ref,
            versionRef: v.version.ref,
            fileName: entry.path,
            mediaType: entry.mediaType,
            size: entry.size,
            sha256: entry.sha256,
            createdAt: v.version.createdAt,
            fileUrl,
            body,
            nonce,
          })
          return reply
            .header('content-security-policy', pageCsp(nonce))
            .header('x-content-type-options', 'nosniff')
            .header('referrer-policy', 'no-referrer')
            .header('cache-control', 'private, no-store')
            .type('text/html; charset=utf-8')
            .send(html)
        },
      )
    })
  }
}
