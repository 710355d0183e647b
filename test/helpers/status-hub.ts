// Child process of the durable status test: a Hub (its database from SVC_SERVER_DATABASE_*,
// no co-located broker) listening on 127.0.0.1 at a free port. Prints `listening <url> <dev
// token>` once it answers, then serves until it is killed.
import pino from 'pino'
import {resolveBootstrap} from '../../src/config/bootstrap.js'
import {createHub, listenHub} from '../../src/main.js'

const env = {...process.env}
const bootstrap = resolveBootstrap({port: 0}, env)
bootstrap.values['server.broker.enabled'] = false
const hub = await createHub(bootstrap, {env, logger: pino({level: 'silent'})})
const url = await listenHub(hub, bootstrap)
process.stdout.write(`listening ${url} ${hub.config.devToken}\n`)
