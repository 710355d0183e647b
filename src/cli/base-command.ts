import {Command, Flags, Errors} from '@oclif/core'
import {AppError} from '../api/app-error.js'
import type {HubClient} from '../client/hub-client.js'
import type {CliSettings} from '../config/cli-settings.js'
import {CommandContext, usageHint} from './command-context.js'
import {EXIT} from './exit-codes.js'
import {unknownFlagsError} from './suggest.js'


/**
 * Base of every svc command. Subclasses implement `execute()` returning a typed result and
 * `human()` rendering it. With `--json` exactly one JSON document goes to stdout: the result or
 * `{"error": {code, message, details}}`. Errors set the exit codes of CONTRACT.md.
 */
export abstract class BaseCommand<T = unknown> extends Command {
  static override baseFlags = {
    json: Flags.boolean({description: 'Print one JSON document on stdout.', helpGroup: 'GLOBAL'}),
  }

  protected json = false
  private contextCache?: CommandContext

  /** The framework-free part (command-context.ts), following `json` as a subclass sets it. */
  protected get ctx(): CommandContext {
    const c = (this.contextCache ??= new CommandContext(this.json))
    c.json = this.json
    return c
  }

  abstract execute(): Promise<T>

  /** Human rendering of the result; null prints nothing. */
  protected human(result: T): string | null {
    return typeof result === 'string' ? result : JSON.stringify(result, null, 2)
  }

  protected settings(): Promise<CliSettings> {
    return this.ctx.settings()
  }

  /**
   * Hub endpoint: `--hub`, then `SVC_HUB_ENDPOINT`, then settings `hub.endpoint`, then the URL a
   * running workstation Hub recorded in ~/.svc/hub.json, then the default.
   */
  protected endpoint(flag?: string): Promise<string> {
    return this.ctx.endpoint(flag)
  }

  protected client(hubFlag?: string, opts: {anonymous?: boolean} = {}): Promise<HubClient> {
    return this.ctx.client(hubFlag, opts)
  }

  /** True when prompts are allowed: a TTY, no --json, and `cli.interactive_disabled` off. */
  protected canPrompt(): Promise<boolean> {
    return this.ctx.canPrompt()
  }

  async run(): Promise<T> {
    this.json = this.argv.includes('--json')
    const result = await this.execute()
    this.ctx.print(result, (r) => this.human(r))
    return result
  }

  protected override async catch(err: Error & {oclif?: {exit?: number}}): Promise<void> {
    this.json = this.argv.includes('--json')
    await this.ctx.fail(this.unknownFlags(err) ?? toAppError(err), () => this.usageHint())
  }

  /** A mistyped flag: oclif's "Nonexistent flag" with the nearest flag of this command. */
  private unknownFlags(err: Error): AppError | undefined {
    const given = (err as {flags?: unknown}).flags
    if (!(err instanceof Errors.CLIError) || !Array.isArray(given) || !given.every((f) => typeof f === 'string')) return undefined
    const ctor = this.constructor as typeof BaseCommand
    return unknownFlagsError(toAppError(err).message, given, {...ctor.baseFlags, ...ctor.flags})
  }

  private usageHint(): string {
    const ctor = this.constructor as typeof BaseCommand
    return usageHint(this.config.bin, this.id ?? '', ctor.args ?? {})
  }
}

/** Normalises anything thrown into the catalogue: parse errors are usage errors (exit 2). */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err
  if (err instanceof Errors.CLIError || (err as {oclif?: {exit?: number}})?.oclif?.exit === 2) {
    const message = (err as Error).message.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('See more help')).join(' ')
    return new AppError('usage_error', message)
  }
  return new AppError('internal_error', (err as Error)?.message ?? String(err))
}

export {EXIT}
