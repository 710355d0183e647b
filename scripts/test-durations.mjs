// Records how long each test file held its worker into test/durations.json; the suite's
// sequencer (test/helpers/sequencer.ts) starts the longest first. The figures come from
// test-output/file-durations.json, which the suite's file-durations reporter writes on every
// `npm test` (import, hooks and tests of each file, whole). Refresh after a full run on a quiet
// machine: `.ci/run`, then `node scripts/test-durations.mjs [<checkout>/test-output/file-durations.json]`.
import {readFileSync, writeFileSync} from 'node:fs'
import {resolve} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const file = resolve(process.argv[2] ?? `${root}/test-output/file-durations.json`)
const seconds = JSON.parse(readFileSync(file, 'utf8'))
const sorted = Object.fromEntries(Object.entries(seconds).sort(([a, x], [b, y]) => y - x || a.localeCompare(b)))
writeFileSync(`${root}/test/durations.json`, `${JSON.stringify(sorted, null, 2)}\n`)
console.log(`${Object.keys(sorted).length} files recorded in test/durations.json`)
