import {Flags} from '@oclif/core'
import {AppError} from '../../src/api/app-error.js'
import {BaseCommand} from '../../src/cli/base-command.js'
import {canOpenBrowser, openUrl} from '../../src/cli/browser.js'
import {saveSession} from '../../src/cli/credentials.js'
import {deviceLogin} from '../../src/cli/device-login.js'
import {loopbackLogin} from '../../src/cli/loopback-login.js'
import {fields} from '../../src/cli/render.js'
import {HubClient, type SignedIn} from '../../src/client/hub-client.js'

interface LoginResult {
  hub: string
  method: 'browser' | 'device'
  user: SignedIn['user']
  expiresAt: string
}

export default class AuthLogin extends BaseCommand<LoginResult> {
  static override description = `Sign in to a Hub with its OpenID provider and save the session for this Hub.

By default a browser opens on this machine and the Hub hands the session back to a listener on 127.0.0.1. With --device (or when no browser can be opened here, e.g. over SSH) you get a code to enter on any device. SVC_BROWSER, when set, is the command used to open URLs. The session is saved in ~/.svc/credentials.json (mode 0600).`
  static override examples = ['<%= config.bin %> auth login', '<%= config.bin %> auth login --hub https://hub.example.com --device']
  static override flags = {
    hub: Flags.string({description: 'Hub URL (default: SVC_HUB_ENDPOINT, settings hub.endpoint, http://127.0.0.1:9810).'}),
    device: Flags.boolean({description: 'Sign in with a code entered on any device (device flow).'}),
    'no-browser': Flags.boolean({description: 'Do not open a browser: print the address to open (on this machine) instead.'}),
  }

  async execute(): Promise<LoginResult> {
    const {flags} = await this.parse(AuthLogin)
    const endpoint = await this.endpoint(flags.hub)
    const client = new HubClient(endpoint, null)
    // Fails fast (unreachable Hub, no OpenID provider) before a browser or a listener is involved.
    const {oidc} = await client.signInProviders()
    if (!oidc) throw new AppError('oidc_unconfigured', `interactive sign-in is not configured on ${endpoint}: its operator sets server.auth.oidc.issuer_url, client_id and client_secret`)
    const browser = !flags['no-browser'] && canOpenBrowser()
    const device = flags.device || (!flags['no-browser'] && !browser && oidc.deviceFlow)
    if (flags.device && !oidc.deviceFlow) {
      throw new AppError('device_flow_unsupported', `the OpenID provider of ${endpoint} offers no device sign-in; run svc auth login without --device`)
    }
    const notify = (text: string) => process.stderr.write(text + '\n')
    const signed = device
      ? await deviceLogin({client, open: browser ? (u) => openUrl(u) : null, notify})
      : await loopbackLogin({client, open: async (u) => browser && (await openUrl(u)), notify})
    saveSession(endpoint, {token: signed.token, expiresAt: signed.expiresAt, email: signed.user.email})
    return {hub: endpoint, method: device ? 'device' : 'browser', user: signed.user, expiresAt: signed.expiresAt}
  }

  protected override human(r: LoginResult): string {
    return [
      `Signed in to ${r.hub}.`,
      fields([
        ['User', `${r.user.displayName} <${r.user.email}>`],
        ['System admin', r.user.systemAdmin ? 'yes' : 'no'],
        ['Session expires', r.expiresAt],
      ]),
    ].join('\n')
  }
}
