// Child process of the settings crash test: a workstation Hub on SQLite in $HOME saving, over and
// over, a change that touches both the database (quotas) and the settings file (server.hub.port).
// Prints `saved <n>` after each acknowledged save, so the parent knows what must survive a SIGKILL.
import pino from 'pino'
import {resolveBootstrap} from '../../src/config/bootstrap.js'
import {createHub} from '../../src/main.js'

const start = Number(process.argv[2] ?? 1)
const env = {...process.env}
const hub = await createHub(resolveBootstrap({port: 0}, env), {env, logger: pino({level: 'silent'})})
process.stdout.write('ready\n')
for (let n = start; ; n++) {
  const res = await hub.app.inject({
    method: 'PUT',
    url: '/api/v1/admin/server-config',
    headers: {authorization: `Bearer ${hub.config.devToken}`},
    payload: {quotas: {max_agents_per_project: n}, server: {hub: {port: 10_000 + n}}},
  })
  if (res.statusCode !== 200) {
    process.stderr.write(`save ${n}: ${res.statusCode} ${res.body}\n`)
    process.exit(1)
  }
  process.stdout.write(`saved ${n}\n`)
}
