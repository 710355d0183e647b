// Bundles the CLI and Hub into dist/ with esbuild. Code-splitting keeps heavy modules
// (Fastify, database drivers) in chunks that only the commands needing them import.
// The bundle is built beside dist/ and swapped in by rename, so an `svc` started while
// another build runs (several people and test runs share one tree) never finds dist/ half
// written or missing. Then oclif.manifest.json is regenerated from the new bundle.
import {build} from 'esbuild'
import {existsSync, linkSync, renameSync, rmSync} from 'node:fs'
import {fileURLToPath} from 'node:url'

const dist = fileURLToPath(new URL('../dist', import.meta.url))
const fresh = `${dist}.build-${process.pid}`
const old = `${dist}.old-${process.pid}`

/** Moves the new bundle into place; a concurrent build may swap between our two renames. */
function swapIn() {
  for (let attempt = 0; ; attempt++) {
    try {
      if (existsSync(dist)) renameSync(dist, `${old}-${attempt}`)
    } catch (err) {
      if (err.code !== 'ENOENT') throw err
    }
    try {
      renameSync(fresh, dist)
      return
    } catch (err) {
      if (!['ENOTEMPTY', 'EEXIST'].includes(err.code) || attempt > 5) throw err
    }
  }
}

rmSync(fresh, {recursive: true, force: true})
try {
  await build({
    entryPoints: {cli: 'src/cli/entry.ts'},
    outdir: fresh,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    logLevel: 'warning',
    chunkNames: 'chunks/[name]-[hash]',
  })
  // dist/svc (the single executable, `npm run build:binary`) is not built here: carry it over.
  try {
    linkSync(`${dist}/svc`, `${fresh}/svc`)
  } catch (err) {
    if (err.code !== 'ENOENT') throw err
  }
  swapIn()
} finally {
  rmSync(fresh, {recursive: true, force: true})
  for (let attempt = 0; attempt <= 6; attempt++) rmSync(`${old}-${attempt}`, {recursive: true, force: true})
}

const {writeManifest} = await import('./manifest.mjs')
await writeManifest()
