import {dirname} from 'node:path'
import {Plugin, type Interfaces} from '@oclif/core'
import {COMMANDS} from './commands.js'

/**
 * package.json's data (name, version, description, oclif), inlined by the single-executable
 * build (scripts/build-binary.mjs, esbuild `define`). Undefined in the dev build and in tests,
 * where oclif reads package.json and oclif.manifest.json from the checkout as usual.
 */
declare const __SVC_PJSON__: Interfaces.PJSON | undefined

/**
 * oclif options for running inside the single executable, where there is no package.json,
 * no oclif.manifest.json and no dist/cli.js on disk; undefined elsewhere.
 *
 * Why this seam: `run(argv, root)` makes oclif find and read package.json, read the manifest,
 * and — for the explicit strategy — `tsPath` + `import()` the target file to get COMMANDS. None of
 * that can work in the executable. `Config.load` accepts ready-made plugins instead
 * (`options.plugins`): the plugin loader then uses them as they are and loads no user, dev or
 * core plugins from disk. So we build the root Plugin ourselves with
 * - `pjson` in memory (a root plugin given a pjson does not look for package.json),
 * - `commandCache` set to the COMMANDS object already in the bundle: `loadCommandsFromTarget()`
 *   returns it before touching the target file (the field is private in oclif's typings only),
 * - `ignoreManifest`, so oclif computes the manifest from COMMANDS (a few ms) instead of reading
 *   an `oclif.manifest.json` that might happen to lie beside the executable.
 * COMMANDS is the one registry (src/cli/commands.ts): the executable picks up whatever it holds
 * at build time, with no second list.
 */
export async function embeddedOclifOptions(): Promise<Interfaces.LoadOptions | undefined> {
  if (typeof __SVC_PJSON__ === 'undefined' || !__SVC_PJSON__) return undefined
  const root = dirname(process.execPath)
  const pjson = structuredClone(__SVC_PJSON__)
  const plugin = new Plugin({root, pjson, isRoot: true, type: 'core', ignoreManifest: true, respectNoCacheDefault: true})
  ;(plugin as unknown as {commandCache: typeof COMMANDS}).commandCache = COMMANDS
  await plugin.load()
  return {root, pjson, plugins: new Map([[plugin.name, plugin]])}
}
