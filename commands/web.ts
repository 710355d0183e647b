import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../src/cli/base-command.js'
import {canOpenBrowser, openUrl} from '../src/cli/browser.js'

interface WebLink {
  url: string
  expiresAt: string
}

/**
 * Opens the browser on a one-time link only where a person is at this machine's screen: never
 * with --json or in CI; `SVC_BROWSER` is an explicit choice; otherwise a terminal and a graphical
 * session (or macOS) are needed.
 */
function shouldOpen(json: boolean, noOpen: boolean, env: NodeJS.ProcessEnv = process.env): boolean {
  if (json || noOpen || (env.CI && env.CI !== 'false')) return false
  if (env.SVC_BROWSER) return true
  return !!process.stdout.isTTY && canOpenBrowser(env)
}

export default class Web extends BaseCommand<WebLink> {
  static override description = `Sign the browser in to the Hub's pages with a one-time link.

Prints a sign-in link for the credential this CLI uses (the dev credential of a workstation Hub, or your svc auth login session) and opens it when a browser is available here (a terminal with a graphical session, or macOS; SVC_BROWSER, when set, is the command used). The link works once, within a minute. PATH is the page to land on: a view like agents/<id> or a Hub path like /projects/<project>/artifacts/<id>. Agents, brokers and access tokens cannot make links.`
  static override examples = ['<%= config.bin %> web', '<%= config.bin %> web agents/01J0ABC', '<%= config.bin %> web /#/settings --no-open', '<%= config.bin %> web --json']
  static override args = {
    path: Args.string({description: 'The page to open after sign-in (default: the home page).'}),
  }
  static override flags = {
    hub: Flags.string({description: 'Hub URL (default: SVC_HUB_ENDPOINT, settings hub.endpoint, http://127.0.0.1:9810).'}),
    'no-open': Flags.boolean({description: 'Only print the link; do not open a browser.'}),
  }

  private opened = false

  async execute(): Promise<WebLink> {
    const {args, flags} = await this.parse(Web)
    const client = await this.client(flags.hub)
    const link = await client.call<{path: string; url: string; expiresAt: string}>('POST', '/api/v1/auth/web-sign-in', args.path === undefined ? {} : {path: args.path})
    // The address this CLI reached the Hub at: the Hub's own idea of its URL may name another port.
    const url = client.endpoint.replace(/\/+$/, '') + link.path
    if (shouldOpen(this.json, flags['no-open'])) this.opened = await openUrl(url)
    return {url, expiresAt: link.expiresAt}
  }

  protected override human(r: WebLink): string {
    const seconds = Math.max(0, Math.round((Date.parse(r.expiresAt) - Date.now()) / 1000))
    return [
      `Open this link in your browser within ${seconds} s (it works once):`,
      `  ${r.url}`,
      ...(this.opened ? ['Opened it in your browser.'] : []),
    ].join('\n')
  }
}
