// The single executable's main bundle (scripts/build-binary.mjs bundles it as CommonJS, as Node
// SEA requires). Inside the executable process.argv is [svc, svc, ...args].
// The build also loads this bundle once to record a V8 code cache: it sets
// __SVC_CODE_CACHE_BUILD__ and calls main itself with a few sample command lines.
import {main as cliMain} from './entry.js'

/** `svc hook ...` (harness hooks, on every tool call) skips the CLI framework entirely. */
export async function main(argv: string[]): Promise<void> {
  if (argv[0] === 'hook') return (await import('./hook-entry.js')).runHook(argv.slice(1))
  return cliMain(argv)
}

if (!(globalThis as {__SVC_CODE_CACHE_BUILD__?: boolean}).__SVC_CODE_CACHE_BUILD__) void main(process.argv.slice(2))
