import {AppError} from './api/app-error.js'
import type {Bootstrap} from './config/bootstrap.js'
import {createHub, listenHub, type Hub} from './main.js'
import {hubLogger} from './hub-logger.js'

/**
 * Runs a Hub as the foreground process: logs to stderr (hub-logger.ts), and on SIGINT or SIGTERM
 * stops accepting, lets in-flight requests finish and closes the database. Signal handlers are
 * installed before anything starts, so a signal during start-up also shuts down cleanly.
 * A second signal exits at once.
 */
export async function startServer(bootstrap: Bootstrap): Promise<{url: string; stopped: Promise<void>}> {
  const logger = hubLogger(bootstrap)
  let hub: Hub | null = null
  // True once listenHub returned: closing the Hub while it still starts (e.g. while the
  // co-located broker connects) left listenHub awaiting a promise nothing would settle, and
  // the process exited 13 (unsettled top-level await) instead of 0.
  let started = false
  let signalled: string | null = null
  let resolveStopped: () => void = () => {}
  const stopped = new Promise<void>((r) => (resolveStopped = r))

  const shutdown = async () => {
    logger.info({signal: signalled}, 'shutting down')
    try {
      await hub?.close()
      logger.info('stopped')
    } catch (err) {
      logger.error({err}, 'shutdown failed')
      process.exitCode = 1
    }
    logger.flush()
    resolveStopped()
  }
  const onSignal = (signal: string) => {
    if (signalled) {
      logger.warn({signal}, 'second signal: exiting now')
      process.exit(1)
    }
    signalled = signal
    // During start-up the shutdown runs once start-up has finished (see below).
    if (started) void shutdown()
  }
  process.on('SIGINT', () => onSignal('SIGINT'))
  process.on('SIGTERM', () => onSignal('SIGTERM'))

  hub = await createHub(bootstrap, {logger})
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
  started = true
  if (signalled) void shutdown()
  return {url, stopped}
}
