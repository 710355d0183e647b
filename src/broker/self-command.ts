/**
 * argv that runs this same svc program again: the single executable alone, or Node with the
 * checkout's `bin/run.js`. Harness hooks call it (`svc hook <harness> <event>`), so it must be
 * absolute and need no PATH or shell.
 */
import {existsSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

let cached: string[] | undefined

export function selfCommand(): string[] {
  if (cached) return cached
  const script = process.argv[1]
  // In a single executable, argv[1] is the executable again (or absent); there is no script.
  if (!script || script === process.execPath || !/\.(c|m)?js$/.test(script)) return (cached = [process.execPath])
  // Under the bundle, the entry is bin/run.js; under vitest or tsx, find bin/run.js from this file.
  if (/bin[\\/]run\.js$/.test(script)) return (cached = [process.execPath, script])
  let dir = dirname(fileURLToPath(import.meta.url))
  for (let i = 0; i < 5; i++, dir = dirname(dir)) {
    const run = join(dir, 'bin', 'run.js')
    if (existsSync(run)) return (cached = [process.execPath, run])
  }
  return (cached = [process.execPath, script])
}
