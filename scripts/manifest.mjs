// Writes oclif.manifest.json: oclif's cached form of every command in the explicit registry
// (COMMANDS in dist/cli.js), exactly as oclif itself computes it when no manifest exists.
// oclif reads the file at start-up (it sits at the package root), so `svc help` and command
// lookup need not cache every command class on each run. `npm run build` regenerates it, and
// test/catalogue/manifest.test.ts fails when the committed file is stale.
import {readFileSync, renameSync, writeFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {Plugin} from '@oclif/core'

const root = fileURLToPath(new URL('..', import.meta.url))
export const MANIFEST_FILE = fileURLToPath(new URL('../oclif.manifest.json', import.meta.url))

/** The manifest oclif would build from dist/cli.js, as JSON text. */
export async function manifestText() {
  // The dev bundle loads command classes on demand (scripts/dev-lazy-registry.mjs): all of them
  // here, handed to oclif as its command cache (its own import of the file may be another
  // instance of the module, under vitest).
  const {COMMANDS} = await import(new URL('../dist/cli.js', import.meta.url).href)
  await COMMANDS[Symbol.for('svc.loadCommands')]?.()
  const plugin = new Plugin({root, type: 'core', isRoot: true, ignoreManifest: true, errorOnManifestCreate: true, respectNoCacheDefault: true})
  plugin.commandCache = COMMANDS
  await plugin.load()
  return JSON.stringify(plugin.manifest, null, 2) + '\n'
}

/** Writes the manifest when it changed, by rename so a running `svc` never reads half a file. */
export async function writeManifest() {
  const text = await manifestText()
  let current = null
  try {
    current = readFileSync(MANIFEST_FILE, 'utf8')
  } catch {
    // absent
  }
  if (current !== text) {
    const tmp = `${MANIFEST_FILE}.${process.pid}.tmp`
    writeFileSync(tmp, text)
    renameSync(tmp, MANIFEST_FILE)
  }
  return text
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = await writeManifest()
  const count = Object.keys(JSON.parse(text).commands).length
  process.stderr.write(`wrote oclif.manifest.json (${count} commands)\n`)
}
