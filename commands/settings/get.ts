import {Args, Flags} from '@oclif/core'
import {AppError} from '../../src/api/app-error.js'
import {BaseCommand} from '../../src/cli/base-command.js'
import {nodeAt} from '../../src/config/schema/walk.js'
import {META_KEYS} from '../../src/domain/settings/keys.js'

export default class SettingsGet extends BaseCommand<unknown> {
  static override description = `Print the Hub's settings (admin): all of them, or one dotted key.

Reads GET /api/v1/admin/server-config: effective values (database sections over bootstrap), plus mode, layer0_editable, env_overrides and each section's origin and revision. Needs a system admin on an interactive session or the dev credential.`
  static override examples = ['<%= config.bin %> settings get', '<%= config.bin %> settings get quotas.max_agents_per_project', '<%= config.bin %> settings get sections --json']
  static override args = {key: Args.string({description: 'Dotted key, like quotas.enforce_broker_quotas or sections.quotas.'})}
  static override flags = {hub: Flags.string({description: 'Hub URL (default: SVC_HUB_ENDPOINT, settings hub.endpoint, http://127.0.0.1:9810).'})}

  async execute(): Promise<unknown> {
    const {args, flags} = await this.parse(SettingsGet)
    // An unknown key is refused before any request: printing nothing would read as "unset".
    if (args.key && !META_KEYS.has(args.key.split('.')[0]) && !nodeAt(args.key.split('.'))) {
      throw new AppError('usage_error', `unknown setting "${args.key}": see \`svc settings get\` for every key, and docs/settings.md`)
    }
    const all = await (await this.client(flags.hub)).call<Record<string, unknown>>('GET', '/api/v1/admin/server-config')
    if (!args.key) return all
    let cur: unknown = all
    for (const seg of args.key.split('.')) cur = cur && typeof cur === 'object' ? (cur as Record<string, unknown>)[seg] : undefined
    return cur ?? null
  }

  protected override human(v: unknown): string {
    if (v === null || v === undefined) return ''
    if (typeof v === 'object') return JSON.stringify(v, null, 2)
    return String(v)
  }
}
