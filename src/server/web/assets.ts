import {readdirSync, readFileSync, statSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

/** The web client's files by URL path (`/index.html`, `/assets/app-1a2b.js`). */
export type WebAssets = Map<string, Buffer>

/**
 * The web client as built by `npm run build` (Vite, into dist/web). The bundles replace this
 * module with one holding the files themselves (scripts/web-assets.mjs), so `dist/cli.js` and
 * the single executable serve the client without reading the checkout; this version, read from
 * disk, is what tests running the sources use.
 */
export function loadWebAssets(): WebAssets {
  const root = fileURLToPath(new URL('../../../dist/web', import.meta.url))
  const out: WebAssets = new Map()
  const walk = (dir: string, prefix: string) => {
    let names: string[]
    try {
      names = readdirSync(dir)
    } catch {
      return
    }
    for (const name of names) {
      const file = join(dir, name)
      if (statSync(file).isDirectory()) walk(file, `${prefix}${name}/`)
      else out.set(`${prefix}${name}`, readFileSync(file))
    }
  }
  walk(root, '/')
  return out
}
