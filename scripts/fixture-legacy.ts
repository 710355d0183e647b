// Legacy fixture builder: a database as a release from before provenance left it (schema up to
// 0008, users, projects, agents in creator chains, version-0 edges from the real backfill), so
// starting a Hub on it runs the real provenance migration.
//
//   npm run fixture:legacy -- (--db <file> | --pg-url <url>) --agents N --depth D --seed S
//                             [--anomalies] [--tokens-out <file>]
//
// --pg-url writes into the database the URL names; `?schema=<name>` (or
// `?options=-c search_path=<name>`) selects a schema, created when missing. The agent tokens go
// to `<database>.tokens.json`: beside the SQLite file, or for PostgreSQL in the current
// directory as `<dbname>[.<schema>].tokens.json` unless --tokens-out names a file. With
// --anomalies the planted cases (case → agent ID) are printed in the summary on stdout.
import {existsSync, writeFileSync} from 'node:fs'
import {resolve} from 'node:path'
import {parseArgs} from 'node:util'
import pg from 'pg'
import {buildLegacyFixture} from '../test/helpers/legacy-fixture.js'

function usage(message: string): never {
  process.stderr.write(`${message}\nusage: npm run fixture:legacy -- (--db <file> | --pg-url <url>) --agents N --depth D --seed S [--anomalies] [--tokens-out <file>]\n`)
  process.exit(2)
}

/** The schema a PostgreSQL URL selects, and the URL the store should open (search_path set). */
function pgTarget(raw: string): {url: string; adminUrl: string; schema: string | null; database: string} {
  const admin = new URL(raw)
  admin.searchParams.delete('schema')
  admin.searchParams.delete('options')
  const u = new URL(raw)
  let schema = u.searchParams.get('schema')
  if (schema) {
    u.searchParams.delete('schema')
    u.searchParams.set('options', `-c search_path=${schema}`)
  } else {
    schema = /search_path=([A-Za-z0-9_]+)/.exec(u.searchParams.get('options') ?? '')?.[1] ?? null
  }
  if (schema && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(schema)) usage(`not a schema name: ${schema}`)
  return {url: u.toString(), adminUrl: admin.toString(), schema, database: decodeURIComponent(u.pathname.slice(1)) || 'postgres'}
}

// npm runs scripts from the package root; relative paths are the caller's (INIT_CWD).
const cwd = process.env.INIT_CWD ?? process.cwd()

async function main(): Promise<void> {
  const {values} = parseArgs({
    options: {
      db: {type: 'string'},
      'pg-url': {type: 'string'},
      agents: {type: 'string'},
      depth: {type: 'string'},
      seed: {type: 'string'},
      anomalies: {type: 'boolean', default: false},
      'tokens-out': {type: 'string'},
    },
  })
  if (!!values.db === !!values['pg-url']) usage('give exactly one of --db and --pg-url')
  const num = (name: 'agents' | 'depth' | 'seed', min: number) => {
    const n = Number(values[name])
    if (values[name] === undefined || !Number.isInteger(n) || n < min) usage(`--${name} must be an integer >= ${min}`)
    return n
  }
  const agents = num('agents', 0)
  const depth = num('depth', 1)
  const seed = num('seed', 0)
  let target: {driver: 'sqlite' | 'postgres'; url: string; tokensFile: string}
  if (values.db) {
    const file = resolve(cwd, values.db)
    if (existsSync(file)) usage(`${file} exists; the fixture is written into a new database`)
    target = {driver: 'sqlite', url: file, tokensFile: resolve(cwd, values['tokens-out'] ?? `${file}.tokens.json`)}
  } else {
    const t = pgTarget(values['pg-url']!)
    if (t.schema) {
      const c = new pg.Client({connectionString: t.adminUrl})
      await c.connect()
      await c.query(`create schema if not exists ${t.schema}`)
      await c.end()
    }
    target = {driver: 'postgres', url: t.url, tokensFile: resolve(cwd, values['tokens-out'] ?? `${t.database}${t.schema ? `.${t.schema}` : ''}.tokens.json`)}
  }
  const started = Date.now()
  const f = await buildLegacyFixture({driver: target.driver, url: target.url, agents, depth, seed, anomalies: values.anomalies})
  writeFileSync(target.tokensFile, JSON.stringify(f.tokens, null, 2) + '\n', {mode: 0o600})
  const summary = {database: target.driver === 'sqlite' ? target.url : values['pg-url'], tokensFile: target.tokensFile, agents: f.agents, users: f.users.length, projects: f.projects.length, planted: f.planted, ms: Date.now() - started}
  process.stdout.write(JSON.stringify(summary, null, 2) + '\n')
}

await main()
