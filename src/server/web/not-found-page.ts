import type {FastifyReply, FastifyRequest} from 'fastify'
import {escapeHtml} from '../routes/artifact-page-template.js'

/** Only a browser opening a page (not a script, the CLI, or an API path) gets the HTML 404. */
export const wantsHtmlNotFound = (request: FastifyRequest) =>
  (request.method === 'GET' || request.method === 'HEAD') && !request.url.startsWith('/api/') && /\btext\/html\b/.test(request.headers.accept ?? '')

// Static styles, no script: the page holds nothing from the request but the escaped path.
const CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d232a;background:#f4f6f8}
header{padding:.5rem 1rem;background:#16324f;color:#fff;font-weight:600}
main{max-width:640px;margin:3rem auto;padding:1.5rem 2rem;background:#fff;border:1px solid #c9d1da;border-radius:6px}
h1{font-size:1.4rem;margin:0 0 .5rem}code{font:13px ui-monospace,monospace;background:#eff2f5;padding:1px 4px;border-radius:4px;word-break:break-all}
.muted{color:#5b6670;font-size:13px}a.home{display:inline-block;margin-top:.5rem;padding:.35rem .8rem;border-radius:4px;background:#16324f;color:#fff;text-decoration:none}`

/** The Hub's styled 404 page for a path it does not serve, with a link to the web client. */
export function sendNotFoundPage(request: FastifyRequest, reply: FastifyReply) {
  const path = request.url.split('?')[0]
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Not found - svc Hub</title><style>${STYLE}</style></head>
<body><header>svc Hub</header>
<main id="not-found"><h1>Page not found</h1>
<p>The Hub has no page at <code>${escapeHtml(path)}</code>.</p>
<p><a class="home" href="/">Go to the Hub's home page</a></p>
<p class="muted">Request ${escapeHtml(request.id)}</p></main>
</body></html>
`
  return reply
    .code(404)
    .header('x-request-id', request.id)
    .header('content-security-policy', CSP)
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(html)
}
