// esbuild plugins of the executable's bundles (scripts/build-binary.mjs): source patches, the
// built-in dynamic imports SEA needs, absent optional add-ons, and the `debug` shim. Apart from
// the build script only to keep each file short.
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))

/**
 * Source edits that turn a package's run-time file read into a bundled import. Each must match
 * exactly once, so an upgrade that moves the code fails the build instead of shipping a binary
 * that reads files beside itself.
 */
export const PATCHES = [
  {
    // oclif's index checks the running Node against its engines range at load time, reading its
    // package.json by a computed path and loading semver (~15 ms). The executable's Node is
    // pinned at build time, so the check cannot fail there: it is dropped.
    file: /@oclif[\\/]core[\\/]lib[\\/]index\.js$/,
    from: 'checkNodeVersion();',
    to: '/* svc executable: Node is pinned at build time, no engine check */',
  },
]

/**
 * esbuild leaves `import('node:x')` as a real dynamic import in CommonJS output, and `import()`
 * cannot work in a SEA main script. This plugin routes each dynamic import of a built-in through
 * a one-line CommonJS module that `require`s it (SEA's `require` does load built-ins), so esbuild
 * emits `Promise.resolve().then(() => require(...))` instead.
 */
export const builtinImportPlugin = {
  name: 'svc-builtin-dynamic-import',
  setup(b) {
    b.onResolve({filter: /^node:/}, (args) => (args.kind === 'dynamic-import' ? {path: args.path, namespace: 'svc-builtin'} : undefined))
    b.onLoad({filter: /.*/, namespace: 'svc-builtin'}, (args) => ({contents: `module.exports = require(${JSON.stringify(args.path)})`, loader: 'js'}))
  },
}

/**
 * Optional native add-ons that packages try to `require` inside a try/catch (ws: bufferutil,
 * utf-8-validate; pg: pg-native). Not installed, so left alone esbuild would keep the `require`,
 * and SEA's `require` warns on every non-built-in it is asked for. Each becomes a module that
 * throws MODULE_NOT_FOUND, which is what those packages expect when the add-on is absent.
 */
// typescript: oclif's tsconfig reader requires it only for a ts-node/tsx development setup,
// which the executable never is; bundled it would be 6 MB of the main script.
const ABSENT_OPTIONAL = ['bufferutil', 'utf-8-validate', 'pg-native', 'typescript']
export const absentOptionalPlugin = {
  name: 'svc-absent-optional',
  setup(b) {
    const filter = new RegExp(`^(${ABSENT_OPTIONAL.join('|')})$`)
    b.onResolve({filter}, (args) => ({path: args.path, namespace: 'svc-absent'}))
    b.onLoad({filter: /.*/, namespace: 'svc-absent'}, (args) => ({
      contents: `throw Object.assign(new Error(${JSON.stringify(`Cannot find module '${args.path}' (not in the svc executable)`)}), {code: 'MODULE_NOT_FOUND'})`,
      loader: 'js',
    }))
  },
}

/**
 * `debug` (oclif's logger) loads tty, supports-color and its formatter at start-up only to find
 * that DEBUG is unset. In the executable it is a shim: without DEBUG every logger is a no-op;
 * with DEBUG set the real package (bundled, lazily evaluated) takes over, so `DEBUG=* svc ...`
 * still traces oclif.
 */
export const debugShimPlugin = {
  name: 'svc-debug-shim',
  setup(b) {
    b.onResolve({filter: /^debug$/}, (args) => (args.namespace === 'svc-debug' ? undefined : {path: 'debug', namespace: 'svc-debug'}))
    b.onLoad({filter: /.*/, namespace: 'svc-debug'}, () => ({
      resolveDir: root,
      loader: 'js',
      contents: `if (process.env.DEBUG) module.exports = require('debug')
else {
  const off = (namespace) => Object.assign(() => {}, {enabled: false, namespace, log() {}, destroy() {}, extend: (sub, d = ':') => off(namespace + d + sub)})
  module.exports = Object.assign(off, {enable() {}, disable: () => '', enabled: () => false, names: [], skips: [], formatters: {}})
  module.exports.default = module.exports
}`,
    }))
  },
}

/** esbuild plugin applying PATCHES. */
export const patchPlugin = {
  name: 'svc-patches',
  setup(b) {
    for (const patch of PATCHES) {
      b.onLoad({filter: patch.file}, (args) => {
        const text = readFileSync(args.path, 'utf8')
        if (text.split(patch.from).length !== 2) throw new Error(`build:binary: expected one ${JSON.stringify(patch.from)} in ${args.path}`)
        return {contents: text.replace(patch.from, patch.to), loader: 'js', resolveDir: join(args.path, '..')}
      })
    }
  },
}
