import {Command, Flags, Errors} from '@oclif/core'
import {AppError} from '../api/app-error.js'
import type {HubClient} from '../client/hub-client.js'
import {loadCliSettings, type CliSettings} from '../config/cli-settings.js'
import {recordedHubUrl} from '../config/hub-record.js'
import {credentialFor} from './credentials.js'
import {EXIT, exitCodeOf} from './exit-codes.js'
import {writeError} from './error-output.js'
import {unknownFlagsError} from './suggest.js'

export const DEFAULT_HUB = 'http://127.0.0.1:9810'

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
  private settingsCache?: CliSettings

  abstract execute(): Promise<T>

  /** Human rendering of the result; null prints nothing. */
  protected human(result: T): string | null {
    return typeof result === 'string' ? result : JSON.stringify(result, null, 2)
  }

  protected async settings(): Promise<CliSettings> {
    this.settingsCache ??= await loadCliSettings()
    return this.settingsCache
  }

  /**
   * Hub endpoint: `--hub`, then `SVC_HUB_ENDPOINT`, then settings `hub.endpoint`, then the URL a
   * running workstation Hub recorded in ~/.svc/hub.json, then the default.
   */
  protected async endpoint(flag?: string): Promise<string> {
    const raw = flag || (await this.settings()).hubEndpoint || recordedHubUrl() || DEFAULT_HUB
    try {
      return new URL(raw).toString().replace(/\/+$/, '')
    } catch {
      throw new AppError('usage_error', `not a Hub URL: "${raw}"`)
    }
  }

  protected async client(hubFlag?: string, opts: {anonymous?: boolean} = {}): Promise<HubClient> {
    const endpoint = await this.endpoint(hubFlag)
    const cred = credentialFor(endpoint)
    if (!cred && !opts.anonymous) {
      throw new AppError('not_signed_in', `no credential for ${endpoint}: run \`svc auth login\`, set SVC_AUTH_TOKEN, or start a workstation Hub (it writes ~/.svc/dev-token)`)
    }
    // Loaded here, not at start-up: the HTTP client pulls in node:https, TLS and crypto, which
    // `svc --version`, help and local commands do not need.
    const {HubClient} = await import('../client/hub-client.js')
    return new HubClient(endpoint, cred?.token ?? null)
  }

  /** True when prompts are allowed: a TTY, no --json, and `cli.interactive_disabled` off. */
  protected async canPrompt(): Promise<boolean> {
    return !this.json && !!process.stdin.isTTY && !!process.stdout.isTTY && !(await this.settings()).interactiveDisabled
  }

  async run(): Promise<T> {
    this.json = this.argv.includes('--json')
    const result = await this.execute()
    if (this.json) {
      process.stdout.write(JSON.stringify(result ?? null, null, 2) + '\n')
    } else {
      const text = this.human(result)
      if (text !== null && text !== '') process.stdout.write(text.endsWith('\n') ? text : text + '\n')
    }
    return result
  }

  protected override async catch(err: Error & {oclif?: {exit?: number}}): Promise<void> {
    const json = this.argv.includes('--json')
    const appErr = this.unknownFlags(err) ?? toAppError(err)
    process.exitCode = exitCodeOf(appErr)
    writeError(appErr, json)
    if (!json && (await this.autohelp())) process.stderr.write(this.usageHint())
  }

  /** A mistyped flag: oclif's "Nonexistent flag" with the nearest flag of this command. */
  private unknownFlags(err: Error): AppError | undefined {
    const given = (err as {flags?: unknown}).flags
    if (!(err instanceof Errors.CLIError) || !Array.isArray(given) || !given.every((f) => typeof f === 'string')) return undefined
    const ctor = this.constructor as typeof BaseCommand
    return unknownFlagsError(toAppError(err).message, given, {...ctor.baseFlags, ...ctor.flags})
  }

  private async autohelp(): Promise<boolean> {
    try {
      return (await this.settings()).autohelp
    } catch {
      return true
    }
  }

  private usageHint(): string {
    const ctor = this.constructor as typeof BaseCommand
    const id = (this.id ?? '').replace(/:/g, ' ')
    const args = Object.entries(ctor.args ?? {}).map(([name, a]) => (a.required ? name.toUpperCase() : `[${name.toUpperCase()}]`))
    return `\nUsage: ${this.config.bin} ${[id, ...args].filter(Boolean).join(' ')} [flags]\nSee \`${this.config.bin} help ${id}\` for more.\n`
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
