/**
 * What a command needs around its own work, without the CLI framework: the settings, the Hub
 * endpoint and client, whether it may prompt, and how an error is reported. BaseCommand
 * (oclif) and the quick path of hot commands (quick-main.ts), which loads no oclif, both use it,
 * so the two cannot drift apart in what they read or print.
 */
import {AppError} from '../api/app-error.js'
import type {HubClient} from '../client/hub-client.js'
import {loadCliSettings, type CliSettings} from '../config/cli-settings.js'
import {recordedHubUrl} from '../config/hub-record.js'
import {credentialFor} from './credentials.js'
import {writeError} from './error-output.js'
import {exitCodeOf} from './exit-codes.js'

export const DEFAULT_HUB = 'http://127.0.0.1:9810'

export class CommandContext {
  private settingsCache?: CliSettings

  /** `json`: the command's argv holds `--json` (one JSON document on stdout, errors included). */
  constructor(public json: boolean) {}

  async settings(): Promise<CliSettings> {
    this.settingsCache ??= await loadCliSettings()
    return this.settingsCache
  }

  /**
   * Hub endpoint: `--hub`, then `SVC_HUB_ENDPOINT`, then settings `hub.endpoint`, then the URL a
   * running workstation Hub recorded in ~/.svc/hub.json, then the default.
   */
  async endpoint(flag?: string): Promise<string> {
    const raw = flag || (await this.settings()).hubEndpoint || recordedHubUrl() || DEFAULT_HUB
    try {
      return new URL(raw).toString().replace(/\/+$/, '')
    } catch {
      throw new AppError('usage_error', `not a Hub URL: "${raw}"`)
    }
  }

  /**
   * The Hub the command itself names (`--hub`, else SVC_HUB_ENDPOINT), which no settings file
   * overrides; undefined when it comes from the files or the recorded Hub. A command that also
   * names its project can then skip reading the settings files.
   */
  namedHub(flag?: string): string | undefined {
    return flag || process.env.SVC_HUB_ENDPOINT || undefined
  }

  async client(hubFlag?: string, opts: {anonymous?: boolean} = {}): Promise<HubClient> {
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
  async canPrompt(): Promise<boolean> {
    return !this.json && !!process.stdin.isTTY && !!process.stdout.isTTY && !(await this.settings()).interactiveDisabled
  }

  /** Whether a failed command is followed by its usage line (`cli.autohelp`, on when unreadable). */
  async autohelp(): Promise<boolean> {
    try {
      return (await this.settings()).autohelp
    } catch {
      return true
    }
  }

  /** Prints a command's result: the JSON document, or the human text (null or '' prints nothing). */
  print<T>(result: T, human: (result: T) => string | null): void {
    if (this.json) {
      process.stdout.write(JSON.stringify(result ?? null, null, 2) + '\n')
    } else {
      const text = human(result)
      if (text !== null && text !== '') process.stdout.write(text.endsWith('\n') ? text : text + '\n')
    }
  }

  /** Reports a command's error (exit code, envelope) and, for a person, how the command is used. */
  async fail(err: AppError, usage: () => string): Promise<void> {
    process.exitCode = exitCodeOf(err)
    writeError(err, this.json)
    if (!this.json && (await this.autohelp())) process.stderr.write(usage())
  }
}

/** The line after a person's failed command: `Usage: svc agent create NAME [TASK] [flags]`. */
export function usageHint(bin: string, id: string, args: Record<string, {required?: boolean}>): string {
  const words = id.replace(/:/g, ' ')
  const names = Object.entries(args).map(([name, a]) => (a.required ? name.toUpperCase() : `[${name.toUpperCase()}]`))
  return `\nUsage: ${bin} ${[words, ...names].filter(Boolean).join(' ')} [flags]\nSee \`${bin} help ${words}\` for more.\n`
}
