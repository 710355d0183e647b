// The web client (web/, Lit) is built by Vite into dist/web, and the bundles carry it: an esbuild
// plugin replaces src/server/web/assets.ts (which reads dist/web from disk) with a module that
// holds the built files, so neither dist/cli.js nor the single executable needs dist/web at run
// time. Like the esbuild bundle, the client is built beside dist/ and moved in file by file.
import {mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync} from 'node:fs'
import {join, relative} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
export const WEB_DIST = join(root, 'dist', 'web')
const KEEP_OLD_ASSETS_MS = 60 * 60 * 1000

function filesUnder(dir) {
  const out = []
  for (const name of readdirSync(dir)) {
    const file = join(dir, name)
    if (statSync(file).isDirectory()) out.push(...filesUnder(file))
    else out.push(file)
  }
  return out
}

/** Builds web/ into dist/web (index.html last, so it never names assets not yet in place). */
export async function buildWeb() {
  const {build} = await import('vite')
  const fresh = join(root, `dist.build-web-${process.pid}`)
  rmSync(fresh, {recursive: true, force: true})
  try {
    await build({root: join(root, 'web'), configFile: false, logLevel: 'warn', base: '/', build: {outDir: fresh, emptyOutDir: true, target: 'es2022', reportCompressedSize: false}})
    const files = filesUnder(fresh).sort((a, b) => Number(a.endsWith('index.html')) - Number(b.endsWith('index.html')))
    const installed = new Set()
    for (const file of files) {
      const to = join(WEB_DIST, relative(fresh, file))
      mkdirSync(join(to, '..'), {recursive: true})
      renameSync(file, to)
      installed.add(to)
    }
    // Earlier builds' assets stay a while for pages already open in a browser, then go.
    const now = Date.now()
    for (const file of filesUnder(join(WEB_DIST, 'assets'))) {
      if (!installed.has(file) && now - statSync(file).mtimeMs > KEEP_OLD_ASSETS_MS) rmSync(file, {force: true})
    }
  } finally {
    rmSync(fresh, {recursive: true, force: true})
  }
}

/** The files index.html names (and itself): older hashed builds in dist/web are left out. */
function currentFiles() {
  const index = readFileSync(join(WEB_DIST, 'index.html'), 'utf8')
  const out = new Map([['/index.html', readFileSync(join(WEB_DIST, 'index.html'))]])
  for (const m of index.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)) out.set(m[1], readFileSync(join(WEB_DIST, m[1])))
  return out
}

/** esbuild plugin: src/server/web/assets.ts becomes a module holding dist/web's current files. */
export const webAssetsPlugin = {
  name: 'svc-web-assets',
  setup(b) {
    b.onLoad({filter: /[\\/]src[\\/]server[\\/]web[\\/]assets\.ts$/}, () => {
      const entries = [...currentFiles()].map(([path, body]) => `[${JSON.stringify(path)}, Buffer.from(${JSON.stringify(body.toString('base64'))}, 'base64')]`)
      return {contents: `export function loadWebAssets() { return new Map([${entries.join(',\n')}]) }\n`, loader: 'js'}
    })
  },
}
