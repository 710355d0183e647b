#!/usr/bin/env node
// The svc entry point. It runs the esbuild bundle in dist/ (built by `npm run build`,
// which `npm start` and `npm test` run first); the release executable embeds the same bundle.
// Every import here is a cost of every `svc` start: the paths below load only what they use.
import {existsSync, readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'

const argv = process.argv.slice(2)
if (argv[0] === '--version' && argv.length === 1) {
  // oclif's answer (its userAgent) without loading oclif and the CLI bundle (~0.8 MB to compile).
  // The executable's loader has the same fast path (scripts/build-binary.mjs, LOADER).
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  process.stdout.write(`${pkg.name}/${pkg.version} ${process.platform}-${process.arch} node-${process.version}\n`)
} else if (!(argv[0] === 'agent' && argv[1] === 'create' && (await quick(argv)))) {
  // Harness hooks run `svc hook ...` on every tool call: that path loads no CLI framework.
  const hook = argv[0] === 'hook'
  const entry = new URL(hook ? '../dist/hook.js' : '../dist/cli.js', import.meta.url)
  if (!existsSync(fileURLToPath(entry))) {
    process.stderr.write('svc: dist/cli.js is missing; run `npm run build` first\n')
    process.exit(2)
  }
  const {main} = await import(entry.href)
  await main(hook ? argv.slice(1) : argv)
}

/**
 * `svc agent create` (every agent's start waits for it) runs without oclif when dist/quick.js is
 * sure how oclif would read its argv (src/cli/quick-main.ts); false: the CLI runs it as always.
 */
async function quick(args) {
  const entry = new URL('../dist/quick.js', import.meta.url)
  if (!existsSync(fileURLToPath(entry))) return false
  // A quick path that fails before it sends anything (it catches what follows) leaves it to the CLI.
  try {
    return await (await import(entry.href)).main(args)
  } catch {
    return false
  }
}
