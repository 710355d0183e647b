import pino, {type Logger} from 'pino'
import pretty from 'pino-pretty'
import type {Bootstrap} from './config/bootstrap.js'

/**
 * The Hub process's logger, on stderr. A person watching a workstation Hub in a terminal reads
 * lines (time, level, message, fields); anything else gets JSON lines, one per record: a pipe, a
 * file, a log collector, and every hosted Hub whatever its terminal. pino-pretty runs as a
 * synchronous stream in this thread, not as a pino transport: transports load in worker
 * threads by file name, which the bundled build (scripts/build.mjs) does not ship. NO_COLOR
 * (any non-empty value, no-color.org) turns colours off; the lines stay readable.
 */
export function hubLogger(bootstrap: Pick<Bootstrap, 'mode' | 'logLevel'>, env: NodeJS.ProcessEnv = process.env, stderrIsTTY = process.stderr.isTTY === true): Logger {
  const opts = {level: bootstrap.logLevel, base: {svc: 'hub'}}
  if (bootstrap.mode !== 'workstation' || !stderrIsTTY) return pino(opts, pino.destination(2))
  return pino(opts, pretty({sync: true, destination: 2, colorize: !env.NO_COLOR, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,svc'}))
}
