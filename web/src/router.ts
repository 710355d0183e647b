/** The current view from the URL hash: `#/agents/abc?project=p` -> {parts: ['agents','abc'], query}. */
export interface Route {
  parts: string[]
  query: URLSearchParams
}

export function currentRoute(): Route {
  const raw = location.hash.replace(/^#\/?/, '')
  const [path, qs = ''] = raw.split('?')
  return {parts: path.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(qs)}
}

export const go = (hash: string) => {
  location.hash = hash
}
