/**
 * Media types of artifact files, from the file name's extension (the publish request's
 * Content-Type is not trusted), and the delivery rules the spec sets on them.
 */
const BY_EXTENSION: Record<string, string> = {
  txt: 'text/plain',
  text: 'text/plain',
  log: 'text/plain',
  md: 'text/markdown',
  markdown: 'text/markdown',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  json: 'application/json',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  toml: 'application/toml',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  bmp: 'image/bmp',
  html: 'text/html',
  htm: 'text/html',
  svg: 'image/svg+xml',
  pdf: 'application/pdf',
  xml: 'application/xml',
  js: 'text/javascript',
  mjs: 'text/javascript',
  cjs: 'text/javascript',
  css: 'text/css',
  zip: 'application/zip',
  gz: 'application/gzip',
  tgz: 'application/gzip',
  tar: 'application/x-tar',
}

/** Source code and similar text without a registered type of its own: shown and served as plain text. */
const PLAIN_TEXT = new Set(
  'ts tsx jsx py rb go rs java kt kts scala c h cc cpp cxx hpp cs swift php pl lua r sh bash zsh fish ps1 sql diff patch ini cfg conf properties gradle dockerfile makefile mk proto graphql gql tf hcl vue svelte ex exs erl hs ml clj dart nim zig'.split(' '),
)

const extensionOf = (name: string) => {
  const base = name.split('/').pop()!.toLowerCase()
  if (base === 'dockerfile' || base === 'makefile') return base
  const dot = base.lastIndexOf('.')
  return dot > 0 ? base.slice(dot + 1) : ''
}

export function mediaTypeOf(name: string): string {
  const ext = extensionOf(name)
  return BY_EXTENSION[ext] ?? (PLAIN_TEXT.has(ext) ? 'text/plain' : 'application/octet-stream')
}

const baseType = (mediaType: string) => mediaType.split(';')[0].trim().toLowerCase()

/** Plain text, Markdown, CSV, TSV, JSON, YAML, TOML and raster images are shown inline; nothing else. */
const INLINE = new Set([
  'text/plain',
  'text/markdown',
  'text/csv',
  'text/tab-separated-values',
  'application/json',
  'application/yaml',
  'application/x-yaml',
  'text/yaml',
  'application/toml',
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'image/bmp',
])

export const isInline = (mediaType: string) => INLINE.has(baseType(mediaType))

/** Raster images the artifact page shows inline. */
export const isPageImage = (mediaType: string) => ['image/png', 'image/jpeg', 'image/gif', 'image/webp'].includes(baseType(mediaType))

/** Text the artifact page shows in its read-only editor view (Markdown is rendered instead). */
export function isPageText(mediaType: string): boolean {
  const t = baseType(mediaType)
  if (t === 'text/html') return false
  return t.startsWith('text/') || ['application/json', 'application/yaml', 'application/x-yaml', 'application/toml', 'application/xml'].includes(t)
}

export const isMarkdown = (mediaType: string) => baseType(mediaType) === 'text/markdown'

/** The Content-Type header: text types declare UTF-8. */
export function contentTypeHeader(mediaType: string): string {
  const t = baseType(mediaType)
  return isPageText(t) || t === 'text/html' ? `${t}; charset=utf-8` : t
}

/** RFC 6266 Content-Disposition with an ASCII fallback and the exact UTF-8 name. */
export function contentDisposition(mediaType: string, fileName: string): string {
  const kind = isInline(mediaType) ? 'inline' : 'attachment'
  const fallback = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_')
  const encoded = encodeURIComponent(fileName).replace(/['()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase())
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encoded}`
}
