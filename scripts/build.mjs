// Bundles the CLI and Hub into dist/ with esbuild. Code-splitting keeps heavy modules
// (Fastify, database drivers) in chunks that only the commands needing them import.
// Several people and test runs share one tree, so a build never removes dist/: it is built
// beside it and moved in file by file (see install), and an `svc` started or running while
// another build runs never finds its files missing. Then oclif.manifest.json is regenerated.
import {build} from 'esbuild'
import {mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {buildWeb, webAssetsPlugin} from './web-assets.mjs'
import {devLazyRegistryPlugin} from './dev-lazy-registry.mjs'

const dist = fileURLToPath(new URL('../dist', import.meta.url))
const fresh = `${dist}.build-${process.pid}`
// Chunks of earlier builds are kept this long: a running `svc` (a Hub, a test's CLI) imports
// its lazy chunks by the names its own cli.js was built with.
const KEEP_OLD_CHUNKS_MS = 60 * 60 * 1000

/**
 * Moves the new bundle into dist/: content-hashed chunks first (old ones stay for processes
 * still running the old cli.js), then each entry file by rename, which replaces it atomically.
 */
function install() {
  mkdirSync(join(dist, 'chunks'), {recursive: true})
  const chunks = new Set(readdirSync(join(fresh, 'chunks')))
  for (const name of chunks) renameSync(join(fresh, 'chunks', name), join(dist, 'chunks', name))
  for (const name of readdirSync(fresh)) if (name !== 'chunks') renameSync(join(fresh, name), join(dist, name))
  const now = Date.now()
  for (const name of readdirSync(join(dist, 'chunks'))) {
    if (chunks.has(name)) continue
    const file = join(dist, 'chunks', name)
    if (now - statSync(file).mtimeMs > KEEP_OLD_CHUNKS_MS) rmSync(file, {force: true})
  }
}

/**
 * The packages every CLI start loads (oclif and what a command renders or prompts with) are
 * bundled: resolving and compiling oclif's few hundred CommonJS files from node_modules cost
 * each `svc` start ~80 ms of its ~230. Every other dependency stays external, loaded from
 * node_modules only by the commands that use it (the Hub's Fastify, drivers, AWS SDK, telemetry,
 * whose files are found at run time by paths relative to their own). typescript is what oclif
 * would load for a TypeScript plugin, which svc has none of.
 */
const BUNDLED = new Set(['@oclif/core', '@oclif/plugin-help', '@inquirer/prompts', 'chalk', 'fastest-levenshtein', 'yaml'])
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
const external = [...Object.keys(pkg.dependencies).filter((d) => !BUNDLED.has(d)).flatMap((d) => [d, `${d}/*`]), 'typescript']

rmSync(fresh, {recursive: true, force: true})
// The web client first: the CLI bundle embeds it (scripts/web-assets.mjs).
await buildWeb()
try {
  const common = {
    outdir: fresh,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external,
    // Bundled CommonJS (oclif) calls require() for built-ins and JSON files.
    banner: {js: "import {createRequire as __svcCreateRequire} from 'node:module'; const require = __svcCreateRequire(import.meta.url);"},
    sourcemap: 'linked',
    logLevel: 'warning',
    chunkNames: 'chunks/[name]-[hash]',
  }
  await build({
    ...common,
    // `hook` is the fast path of harness hooks (bin/run.js loads it alone for `svc hook ...`).
    entryPoints: {cli: 'src/cli/entry.ts', hook: 'src/cli/hook-main.ts'},
    // Command classes are imported when a start needs them (scripts/dev-lazy-registry.mjs).
    plugins: [webAssetsPlugin, devLazyRegistryPlugin],
  })
  // `quick`: the path of `svc agent create` without oclif (src/cli/quick-main.ts; bin/run.js
  // tries it first). Built on its own so its static imports are a few files, not the ~20 small
  // chunks the shared split makes of them: each ES module file costs the loader ~2 ms of CPU
  // (quick.js imported: ~115 ms of CPU as 4 files, ~160 ms as 20; `node -e 0` ~75, at load 14).
  await build({...common, entryPoints: {quick: 'src/cli/quick-main.ts'}})
  install()
} finally {
  rmSync(fresh, {recursive: true, force: true})
}

const {writeManifest} = await import('./manifest.mjs')
await writeManifest()
