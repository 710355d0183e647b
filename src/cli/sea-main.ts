// The single executable's main bundle (scripts/build-binary.mjs bundles it as CommonJS, as Node
// SEA requires). Inside the executable process.argv is [svc, svc, ...args].
// The build also loads this bundle once to record a V8 code cache: it sets
// __SVC_CODE_CACHE_BUILD__ and calls main itself with a few sample command lines.
// Each path is imported when taken (esbuild makes a bundled `import()` a lazily evaluated
// module), so `svc hook` never evaluates oclif. The quick `svc agent create` is not here: the
// executable's loader runs its own small bundle (quick.cjs) before this one is even compiled.

/** `svc hook ...` (harness hooks, on every tool call) skips the CLI framework entirely. */
export async function main(argv: string[]): Promise<void> {
  if (argv[0] === 'hook') return (await import('./hook-entry.js')).runHook(argv.slice(1))
  return (await import('./entry.js')).main(argv)
}

if (!(globalThis as {__SVC_CODE_CACHE_BUILD__?: boolean}).__SVC_CODE_CACHE_BUILD__) void main(process.argv.slice(2))
