import {html, type TemplateResult} from 'lit'

/**
 * A small syntax colouring for diff lines: comments, strings, numbers and keywords of the usual
 * languages, chosen by file extension. One line at a time (a diff shows fragments, so a full
 * parser would be wrong at hunk edges anyway); lit escapes every piece, so a file's text can
 * never become markup.
 */
const KEYWORDS = new Set(
  (
    'abstract as async await break case catch class const continue def default defer delete do elif else enum export extends false final finally fn for from func function go if impl import in interface is let match mod module mut new nil none null of package pass private protected pub public raise return self static struct super switch this throw true try type typeof undefined use var void while with yield'
  ).split(' '),
)
const HASH_COMMENT = /\.(py|sh|bash|zsh|rb|ya?ml|toml|pl|r|conf|mk|dockerfile)$|(^|\/)(Makefile|Dockerfile)$/i
const CODE = /\.(m?[jt]sx?|c[jt]s|py|go|rs|java|kt|c|h|cc|cpp|hpp|cs|rb|php|swift|scala|sh|bash|zsh|ya?ml|toml|json|sql|lua|dart)$|(^|\/)(Makefile|Dockerfile)$/i

export const isCode = (path: string) => CODE.test(path)

export function colour(text: string, path: string): TemplateResult | string {
  if (!isCode(path)) return text
  const comment = HASH_COMMENT.test(path) ? '#' : '//'
  const token = new RegExp(`((?:${comment === '#' ? '#' : '\\/\\/|\\/\\*'}).*$)|("(?:[^"\\\\]|\\\\.)*"|'(?:[^'\\\\]|\\\\.)*'|\`(?:[^\`\\\\]|\\\\.)*\`)|(\\b\\d[\\d_.]*\\b)|([A-Za-z_$][\\w$]*)`, 'g')
  const parts: Array<TemplateResult | string> = []
  let last = 0
  for (const m of text.matchAll(token)) {
    const [whole, com, str, num, word] = m
    if (word && !KEYWORDS.has(word)) continue
    parts.push(text.slice(last, m.index))
    const cls = com ? 'tok-com' : str ? 'tok-str' : num ? 'tok-num' : 'tok-kw'
    parts.push(html`<span class=${cls}>${whole}</span>`)
    last = m.index! + whole.length
    if (com) break
  }
  parts.push(text.slice(last))
  return html`${parts}`
}
