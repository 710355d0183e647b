import {execFileSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {existsSync} from 'node:fs'
import {dropRunDatabases, PG_RUN_ENV, pgAvailable, pgUrl} from './pg.js'

/**
 * Before any test: the CLI bundle exists (e2e tests spawn bin/run.js), and PostgreSQL answers
 * or, outside CI, the PostgreSQL half is skipped with a visible message.
 */
export default async function setup() {
  if (!existsSync('dist/cli.js') || process.env.SVC_TEST_REBUILD) execFileSync('node', ['scripts/build.mjs'], {stdio: 'inherit'})
  const ok = await pgAvailable()
  if (!ok) {
    if (process.env.CI === 'true' || process.env.CI === '1') {
      throw new Error(`PostgreSQL does not answer at ${pgUrl()}: CI requires it (set SVC_TEST_PG_URL or start the server)`)
    }
    process.stderr.write(`\n!!! PostgreSQL does not answer at ${pgUrl()}: the PostgreSQL half of the suite is SKIPPED.\n\n`)
    return
  }
  // The workers inherit it: their databases carry this run's mark, and what they leave goes here.
  process.env[PG_RUN_ENV] = randomBytes(3).toString('hex')
  return async () => {
    const left = await dropRunDatabases()
    if (left.length) process.stderr.write(`(dropped ${left.length} PostgreSQL database(s) tests of this run left: ${left.join(', ')})\n`)
  }
}
