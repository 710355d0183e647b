#!/usr/bin/env node
// The svc entry point. It runs the esbuild bundle in dist/ (built by `npm run build`,
// which `npm start` and `npm test` run first); the release executable embeds the same bundle.
import {existsSync} from 'node:fs'
import {fileURLToPath} from 'node:url'

// Harness hooks run `svc hook ...` on every tool call: that path loads no CLI framework.
const hook = process.argv[2] === 'hook'
const entry = new URL(hook ? '../dist/hook.js' : '../dist/cli.js', import.meta.url)
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('svc: dist/cli.js is missing; run `npm run build` first\n')
  process.exit(2)
}
const {main} = await import(entry.href)
await main(process.argv.slice(hook ? 3 : 2))
