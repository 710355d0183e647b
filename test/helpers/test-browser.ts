import http from 'node:http'

/**
 * A browser played over node:http for sign-in tests: it follows redirects, keeps cookies (per
 * host and path, as RFC 6265 does: ports do not separate cookies) and fills the forms of
 * oidc-provider's development pages (login, consent, device code entry and confirmation).
 */

export interface Page {
  url: URL
  status: number
  headers: http.IncomingHttpHeaders
  body: string
}

export interface Step {
  method: string
  url: string
  status: number
  location?: string
  setCookie?: string[]
}

interface Request {
  method: string
  url: URL
  form?: Record<string, string>
}

interface Cookie {
  host: string
  path: string
  name: string
  value: string
}

export interface BrowseOptions {
  /** Account name typed into the provider's login form. */
  login?: string
  /** Decline at the provider (the Cancel link of its pages). */
  deny?: boolean
  /** Stop before requesting a URL for which this is true; the page then has status 0. */
  stopAt?: (url: URL) => boolean
}

const ENTITIES: Record<string, string> = {amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#x27': "'", '#x2F': '/', '#x3D': '='}
const decode = (s: string) => s.replace(/&(#?\w+);/g, (m, e: string) => ENTITIES[e] ?? m)

function attrs(tag: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const m of tag.matchAll(/([\w-]+)(?:\s*=\s*"([^"]*)")?/g)) out[m[1].toLowerCase()] = decode(m[2] ?? '')
  return out
}

/** The first form with method post: its action and the name/value of its inputs. */
export function parseForm(html: string): {action: string; fields: Record<string, string>} | null {
  const m = /<form\b([^>]*)>([\s\S]*?)<\/form>/i.exec(html)
  if (!m) return null
  const form = attrs(m[1])
  if ((form.method ?? 'get').toLowerCase() !== 'post') return null
  const fields: Record<string, string> = {}
  for (const input of m[2].matchAll(/<input\b([^>]*)>/gi)) {
    const a = attrs(input[1])
    if (a.name) fields[a.name] = a.value ?? ''
  }
  return {action: form.action ?? '', fields}
}

export class TestBrowser {
  readonly history: Step[] = []
  private cookies: Cookie[] = []

  constructor(private readonly defaults: BrowseOptions = {}) {}

  /** The value of a cookie this browser holds for a host. */
  cookie(host: string, name: string): string | undefined {
    return this.cookies.find((c) => c.host === host && c.name === name)?.value
  }

  /**
   * Opens `start` and plays the sign-in through: redirects, the provider's login (with
   * `login`), consent and device pages. Returns the first page that is neither a redirect nor
   * a provider form (or where `stopAt` stopped it).
   */
  async open(start: string, opts: BrowseOptions = {}): Promise<Page> {
    const o = {login: 'alice', ...this.defaults, ...opts}
    let req: Request = {method: 'GET', url: new URL(start)}
    let declined = false
    for (let i = 0; i < 40; i++) {
      if (o.stopAt?.(req.url)) return {url: req.url, status: 0, headers: {}, body: ''}
      const page = await this.request(req.method, req.url, req.form)
      const location = page.headers.location
      if (page.status >= 300 && page.status < 400 && location) {
        req = {method: 'GET', url: new URL(location, req.url)}
        continue
      }
      // After declining, follow redirects only: the provider may show its start page again.
      const next: Request | null = declined ? null : this.nextAction(page, o)
      if (!next) return page
      declined = !!o.deny && (next.method === 'GET' || next.form?.abort === 'yes')
      req = next
    }
    throw new Error(`too many steps from ${start}: ${JSON.stringify(this.history.slice(-5))}`)
  }

  private nextAction(page: Page, o: BrowseOptions): Request | null {
    if (page.status !== 200 || !String(page.headers['content-type'] ?? '').includes('html')) return null
    const form = parseForm(page.body)
    if (!form) return null
    const cancel = /<a href="([^"]*)">\[ Cancel \]<\/a>/.exec(page.body)
    if (o.deny && cancel) return {method: 'GET', url: new URL(decode(cancel[1]), page.url)}
    const fields = {...form.fields}
    if ('login' in fields) Object.assign(fields, {login: o.login!, password: 'any'})
    if (o.deny && fields.confirm) fields.abort = 'yes'
    return {method: 'POST', url: new URL(form.action || page.url.pathname, page.url), form: fields}
  }

  private request(method: string, url: URL, form?: Record<string, string>): Promise<Page> {
    const body = form ? new URLSearchParams(form).toString() : undefined
    const headers: Record<string, string> = {accept: 'text/html,application/json;q=0.9', 'user-agent': 'svc-test-browser'}
    const cookie = this.cookies
      .filter((c) => c.host === url.hostname && (url.pathname === c.path || url.pathname.startsWith(c.path.endsWith('/') ? c.path : c.path + '/')))
      .map((c) => `${c.name}=${c.value}`)
      .join('; ')
    if (cookie) headers.cookie = cookie
    if (body !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded'
      headers['content-length'] = String(Buffer.byteLength(body))
      headers.origin = url.origin
    }
    return new Promise((resolve, reject) => {
      const req = http.request(url, {method, headers}, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('error', reject)
        res.on('end', () => {
          for (const line of res.headers['set-cookie'] ?? []) this.store(url, line)
          const status = res.statusCode ?? 0
          const setCookie = res.headers['set-cookie']
          this.history.push({method, url: url.toString(), status, ...(res.headers.location && {location: res.headers.location}), ...(setCookie && {setCookie})})
          resolve({url, status, headers: res.headers, body: Buffer.concat(chunks).toString('utf8')})
        })
      })
      req.on('error', reject)
      req.end(body)
    })
  }

  private store(url: URL, line: string) {
    const [pair, ...parts] = line.split(';')
    const eq = pair.indexOf('=')
    const name = pair.slice(0, eq).trim()
    const value = pair.slice(eq + 1).trim()
    let path = '/'
    let gone = value === ''
    for (const part of parts) {
      const [k, v = ''] = part.split('=')
      const key = k.trim().toLowerCase()
      if (key === 'path') path = v.trim() || '/'
      if (key === 'max-age' && Number(v) <= 0) gone = true
      if (key === 'expires' && Date.parse(v) <= Date.now()) gone = true
    }
    this.cookies = this.cookies.filter((c) => !(c.host === url.hostname && c.path === path && c.name === name))
    if (!gone) this.cookies.push({host: url.hostname, path, name, value})
  }
}
