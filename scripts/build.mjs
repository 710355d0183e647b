// Bundles the CLI and Hub into dist/ with esbuild. Code-splitting keeps heavy modules
// (Fastify, database drivers) in chunks that only the commands needing them import.
import {build} from 'esbuild'
import {rmSync} from 'node:fs'

rmSync(new URL('../dist', import.meta.url), {recursive: true, force: true})
await build({
  entryPoints: {cli: 'src/cli/entry.ts'},
  outdir: 'dist',
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
