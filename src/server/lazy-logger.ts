import type {Bindings, ChildLoggerOptions, Level, Logger} from 'pino'

type Method = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'

/**
 * A request's logger whose pino child (bound to the request ID) is made only when the request
 * logs something at an enabled level. Fastify makes a child per request; on the status route
 * almost no request logs, and the child was a cost of every report. For a route's
 * `childLoggerFactory`: `(logger, bindings, opts) => lazyChildLogger(logger, bindings, opts)`.
 */
export function lazyChildLogger(parent: Logger, bindings: Bindings, opts: ChildLoggerOptions): Logger {
  return new LazyChild(parent, bindings, opts) as unknown as Logger
}

class LazyChild {
  #made: Logger | null = null
  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
    private readonly opts: ChildLoggerOptions,
  ) {}

  private get real(): Logger {
    return (this.#made ??= this.parent.child(this.bindings, this.opts))
  }

  private log(method: Method, args: unknown[]): void {
    if (!this.isLevelEnabled(method)) return
    ;(this.real[method] as (...a: unknown[]) => void)(...args)
  }

  get level(): string {
    return this.opts.level ?? this.parent.level
  }

  isLevelEnabled(level: Level | string): boolean {
    return this.#made ? this.#made.isLevelEnabled(level) : this.opts.level === undefined ? this.parent.isLevelEnabled(level) : this.real.isLevelEnabled(level)
  }

  fatal(...args: unknown[]) {
    this.log('fatal', args)
  }
  error(...args: unknown[]) {
    this.log('error', args)
  }
  warn(...args: unknown[]) {
    this.log('warn', args)
  }
  info(...args: unknown[]) {
    this.log('info', args)
  }
  debug(...args: unknown[]) {
    this.log('debug', args)
  }
  trace(...args: unknown[]) {
    this.log('trace', args)
  }
  silent() {}
  child(bindings: Bindings, opts?: ChildLoggerOptions): Logger {
    return this.real.child(bindings, opts)
  }
}
