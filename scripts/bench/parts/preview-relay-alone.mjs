// The preview relay alone (BENCH_ALONE=1 of environment-preview.mjs): relayHttp of this tree's
// src/server/preview-proxy.ts in a bare Fastify process, to the agent's server on 127.0.0.1:<port>
// by a connection of its own; prints the port it listens on. Run with `node --import tsx`.
// Compared in the same run with the Hub's preview, it tells what the Hub adds around the relay
// (its routes, its co-located broker, its heap) from what the relay itself costs.
import net from 'node:net'
import Fastify from 'fastify'
import {relayHttp} from '../../../src/server/preview-proxy.ts'

const port = Number(process.argv[2])
const app = Fastify()
app.removeAllContentTypeParsers()
app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined))
const open = () =>
  new Promise((resolve, reject) => {
    const c = net.connect({port, host: '127.0.0.1', noDelay: true})
    c.once('connect', () => resolve(c)).once('error', reject)
  })
app.route({
  method: ['GET', 'HEAD'],
  url: '/*',
  preHandler: async (request, reply) => relayHttp(request, reply, await open(), {prefix: '', path: request.url, port}),
  handler: async () => {},
})
await app.listen({port: 0, host: '127.0.0.1'})
process.stdout.write(`${app.server.address().port}\n`)
