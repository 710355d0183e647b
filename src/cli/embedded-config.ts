import {dirname} from 'node:path'
import {Plugin, type Interfaces} from '@oclif/core'
import {COMMANDS} from './commands.js'

/**
 * package.json's data (name, version, description, oclif), inlined by the single-executable
 * build (scripts/build-binary.mjs, esbuild `define`). Undefined in the dev build and in tests,
 * where oclif reads package.json and oclif.manifest.json from the checkout as usual.
 */
declare const __SVC_PJSON__: Interfaces.PJSON | undefined
/** oclif's manifest of COMMANDS, computed at build time and inlined the same way. */
declare const __SVC_MANIFEST__: Interfaces.Manifest | undefined

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
 * - the manifest (the command table: ids, flags, descriptions) built at build time. oclif would
 *   otherwise read `oclif.manifest.json` beside the executable, or compute it by loading every
 *   command class. In the executable COMMANDS is lazy (scripts/build-binary.mjs makes each entry
 *   a getter that loads its module on first use), so listing commands for help or finding one
 *   must not touch the classes: the plugin's `_manifest()` (private in oclif's typings, called
 *   once by `load()`) is replaced on this instance to answer the embedded one. Should a later
 *   oclif drop that method, `ignoreManifest` still makes it compute the manifest from COMMANDS.
 * COMMANDS is the one registry (src/cli/commands.ts): the executable picks up whatever it holds
 * at build time, with no second list.
 */
export async function embeddedOclifOptions(): Promise<Interfaces.LoadOptions | undefined> {
  if (typeof __SVC_PJSON__ === 'undefined' || !__SVC_PJSON__) return undefined
  const root = dirname(process.execPath)
  const pjson = structuredClone(__SVC_PJSON__)
  const plugin = new Plugin({root, pjson, isRoot: true, type: 'core', ignoreManifest: true, respectNoCacheDefault: true})
  const internals = plugin as unknown as {commandCache: typeof COMMANDS; commandIDs: string[]; _manifest?: () => Promise<Interfaces.Manifest>}
  internals.commandCache = COMMANDS
  const manifest = typeof __SVC_MANIFEST__ === 'undefined' ? undefined : __SVC_MANIFEST__
  if (manifest && typeof internals._manifest === 'function') {
    internals._manifest = async () => {
      internals.commandIDs = Object.keys(manifest.commands)
      return manifest
    }
  }
  await plugin.load()
  return {root, pjson, plugins: new Map([[plugin.name, plugin]])}
}
