import MarkdownIt from 'markdown-it'

/**
 * Server-rendered HTML of the artifact page. Everything from the artifact is escaped; Markdown
 * is rendered with raw HTML off, and images are shown only when inline `data:` raster images,
 * so viewing an artifact never makes a request to another host.
 */
export const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'})[c]!)

const DATA_IMAGE = /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]*$/i

let md: MarkdownIt | null = null
function markdown(): MarkdownIt {
  if (md) return md
  md = new MarkdownIt({html: false, linkify: false, typographer: false})
  md.renderer.rules.image = (tokens, idx, options, env, self) => {
    const token = tokens[idx]
    const src = token.attrGet('src') ?? ''
    const alt = self.renderInlineAsText(token.children ?? [], options, env)
    if (DATA_IMAGE.test(src)) return `<img src="${escapeHtml(src)}" alt="${escapeHtml(alt)}">`
    // Remote (or relative) images are not loaded: their alt text stands in.
    return `<span class="img-alt" title="${escapeHtml(`image not loaded: ${src}`)}">${escapeHtml(alt || '[image]')}</span>`
  }
  const linkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options))
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    tokens[idx].attrSet('rel', 'noopener noreferrer nofollow')
    return linkOpen(tokens, idx, options, env, self)
  }
  return md
}

export const renderMarkdown = (text: string) => markdown().render(text)

/** Text in a read-only, line-numbered view (numbers come from CSS, so copying skips them). */
export function renderCode(text: string): string {
  const lines = text.replace(/\r\n?/g, '\n').replace(/\n$/, '').split('\n')
  return `<pre class="code" aria-readonly="true"><code>${lines.map((l) => `<span class="line">${escapeHtml(l)}</span>`).join('\n')}</code></pre>`
}

export interface PageModel {
  title: string
  ownerLabel: string
  seq: number
  currentVersion: number
  ref: string
  versionRef: string
  fileName: string
  mediaType: string
  size: number
  sha256: string
  createdAt: string
  /** Same-origin URL of the file's bytes. */
  fileUrl: string
  /** Rendered body: Markdown, code view, image, or a download offer. */
  body: string
  nonce: string
}

const STYLE = `
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1f2328;background:#fff}
header{padding:16px 24px;border-bottom:1px solid #d0d7de;background:#f6f8fa}
h1{font-size:20px;margin:0 0 6px}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:0;font-size:13px}
dt{color:#59636e}dd{margin:0;font-family:ui-monospace,monospace;word-break:break-all}
main{padding:16px 24px;max-width:1100px}
.markdown img{max-width:100%}
.markdown code{font:13px ui-monospace,monospace;background:#eff2f5;padding:1px 4px;border-radius:4px}
.markdown pre{background:#f6f8fa;border:1px solid #d0d7de;padding:8px 12px;overflow:auto}
.markdown pre code{background:none;padding:0}
.img-alt{display:inline-block;padding:0 4px;border:1px dashed #8c959f;color:#59636e;font-style:italic}
pre.code{counter-reset:line;background:#f6f8fa;border:1px solid #d0d7de;padding:8px 0;overflow:auto;font:13px/1.45 ui-monospace,monospace}
pre.code .line{display:block;padding-right:12px;white-space:pre}
pre.code .line::before{counter-increment:line;content:counter(line);display:inline-block;width:4em;margin-right:12px;padding-right:8px;text-align:right;color:#8c959f;border-right:1px solid #d0d7de;user-select:none}
.preview img{max-width:100%;border:1px solid #d0d7de}
.download{display:inline-block;padding:6px 12px;border:1px solid #d0d7de;border-radius:6px;background:#f6f8fa;color:#0969da;text-decoration:none}
`

export function renderPage(m: PageModel): string {
  const older = m.seq !== m.currentVersion ? ` (current: ${m.currentVersion})` : ''
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(m.title)} - artifact</title>
<style nonce="${m.nonce}">${STYLE}</style></head>
<body>
<header>
<h1 id="artifact-title">${escapeHtml(m.title)}</h1>
<dl>
<dt>Owner</dt><dd id="artifact-owner">${escapeHtml(m.ownerLabel)}</dd>
<dt>Version</dt><dd id="artifact-version">${m.seq}${older}</dd>
<dt>Reference</dt><dd id="artifact-ref">${escapeHtml(m.versionRef)}</dd>
<dt>File</dt><dd>${escapeHtml(m.fileName)} (${escapeHtml(m.mediaType)}, ${m.size} bytes)</dd>
<dt>SHA-256</dt><dd>${m.sha256}</dd>
<dt>Published</dt><dd>${escapeHtml(m.createdAt)}</dd>
</dl>
</header>
<main id="artifact-body">
${m.body}
</main>
</body></html>
`
}

export const downloadLink = (fileUrl: string, fileName: string, note = '') =>
  `<p>${note ? `${escapeHtml(note)} ` : ''}<a class="download" href="${escapeHtml(fileUrl)}" download="${escapeHtml(fileName)}">Download ${escapeHtml(fileName)}</a></p>`
