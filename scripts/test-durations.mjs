// Records how long each test file took, from a vitest JSON report, into test/durations.json;
// the suite's sequencer (test/helpers/sequencer.ts) starts the longest first. Refresh after a
// full run on a quiet machine, e.g. `.ci/run` then `node scripts/test-durations.mjs`.
import {readFileSync, writeFileSync} from 'node:fs'
import {dirname, relative, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const file = resolve(process.argv[2] ?? `${root}/test-output/results.json`)
const report = JSON.parse(readFileSync(file, 'utf8'))
// Names in the report are absolute in the checkout that ran it (a CI clone, say): <it>/test-output/results.json.
const ranIn = dirname(dirname(file))
const out = {}
for (const f of report.testResults ?? []) {
  if (!f.startTime || !f.endTime) continue
  out[relative(ranIn, f.name)] = Math.round((f.endTime - f.startTime) / 100) / 10
}
const sorted = Object.fromEntries(Object.entries(out).sort(([a, x], [b, y]) => y - x || a.localeCompare(b)))
writeFileSync(`${root}/test/durations.json`, `${JSON.stringify(sorted, null, 2)}\n`)
console.log(`${Object.keys(sorted).length} files recorded in test/durations.json`)
