import pino from 'pino'
import {AppError} from './api/app-error.js'
import type {Bootstrap} from './config/bootstrap.js'
import {createHub, listenHub} from './main.js'

/**
 * Runs a Hub as the foreground process: logs to stderr with pino, and on SIGINT or SIGTERM
 * stops accepting, lets in-flight requests finish and closes the database. A second signal
 * exits at once.
 */
export async function startServer(bootstrap: Bootstrap): Promise<{url: string; stopped: Promise<void>}> {
  const logger = pino({level: bootstrap.logLevel, base: {svc: 'hub'}}, pino.destination(2))
  const hub = await createHub(bootstrap, {logger})
  let url: string
  try {
    url = await listenHub(hub, bootstrap)
  } catch (err) {
    await hub.close()
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'EADDRINUSE') throw new AppError('conflict', `port ${bootstrap.values['server.hub.port']} on ${bootstrap.values['server.hub.host']} is already in use`)
    if (code === 'EACCES' || code === 'EADDRNOTAVAIL') throw new AppError('conflict', `cannot bind ${bootstrap.values['server.hub.host']}:${bootstrap.values['server.hub.port']}: ${code}`)
    throw err
  }
  const stopped = new Promise<void>((resolve) => {
    let stopping = false
    const stop = (signal: string) => {
      if (stopping) {
        logger.warn({signal}, 'second signal: exiting now')
        process.exit(1)
      }
      stopping = true
      logger.info({signal}, 'shutting down')
      hub.close().then(
        () => {
          logger.info('stopped')
          logger.flush()
          resolve()
        },
        (err) => {
          logger.error({err}, 'shutdown failed')
          process.exitCode = 1
          resolve()
        },
      )
    }
    process.once('SIGINT', () => stop('SIGINT'))
    process.once('SIGTERM', () => stop('SIGTERM'))
  })
  return {url, stopped}
}
