import {Flags} from '@oclif/core'
import {AppError} from '../../src/api/app-error.js'
import {BaseCommand} from '../../src/cli/base-command.js'
import {saveSession, storedSession} from '../../src/cli/credentials.js'
import {HubClient} from '../../src/client/hub-client.js'

interface LogoutResult {
  hub: string
  /** A saved session existed and was removed from this machine. */
  signedOut: boolean
  /** The Hub revoked the session. */
  revoked: boolean
}

export default class AuthLogout extends BaseCommand<LogoutResult> {
  static override description = `Sign out of a Hub: revoke the saved session at the Hub and remove it from this machine.

Other credentials (SVC_AUTH_TOKEN, the dev credential) are left alone.`
  static override examples = ['<%= config.bin %> auth logout', '<%= config.bin %> auth logout --hub https://hub.example.com']
  static override flags = {
    hub: Flags.string({description: 'Hub URL (default: SVC_HUB_ENDPOINT, settings hub.endpoint, http://127.0.0.1:9810).'}),
  }

  async execute(): Promise<LogoutResult> {
    const {flags} = await this.parse(AuthLogout)
    const hub = await this.endpoint(flags.hub)
    const session = storedSession(hub)
    // Removed here first: whatever the Hub answers, this machine no longer holds the session.
    saveSession(hub, null)
    if (!session) return {hub, signedOut: false, revoked: false}
    try {
      await new HubClient(hub, session.token).logout()
    } catch (err) {
      const e = err instanceof AppError ? err : new AppError('internal_error', (err as Error).message)
      throw new AppError(e.code, `removed the session from this machine, but the Hub did not revoke it (${e.message}); it stays valid until ${session.expiresAt}`, e.details, e.status)
    }
    return {hub, signedOut: true, revoked: true}
  }

  protected override human(r: LogoutResult): string {
    return r.signedOut ? `Signed out of ${r.hub}.` : `Not signed in to ${r.hub}; nothing to do.`
  }
}
