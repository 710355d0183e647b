// Benchmark dispatcher: `npm run bench -- <name> [args...]` runs scripts/bench/<name>.mjs.
import {readdirSync} from 'node:fs'
import {spawnSync} from 'node:child_process'
import {fileURLToPath} from 'node:url'

const dir = fileURLToPath(new URL('./bench/', import.meta.url))
// lib.mjs holds helpers the benches share; it is not a bench.
const available = readdirSync(dir).filter((f) => f.endsWith('.mjs') && f !== 'lib.mjs').map((f) => f.slice(0, -4)).sort()
const [name, ...args] = process.argv.slice(2)
if (!name || !available.includes(name)) {
  process.stderr.write(`usage: npm run bench -- <name>\navailable: ${available.join(', ') || '(none)'}\n`)
  process.exit(name ? 2 : 0)
}
const r = spawnSync(process.execPath, [`${dir}${name}.mjs`, ...args], {stdio: 'inherit'})
process.exit(r.status ?? 1)
