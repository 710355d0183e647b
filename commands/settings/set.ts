import {Args, Flags} from '@oclif/core'
import {AppError} from '../../src/api/app-error.js'
import {BaseCommand} from '../../src/cli/base-command.js'

interface SetResult {
  sections: Record<string, {status: string; revision: number}>
  applied: string[]
  file_keys?: string[]
  reload?: {requires_restart: boolean}
  ignored_keys?: string[]
  notices: string[]
}

/** `a.b=1` -> [['a','b'], '1']; refused before any request when malformed. */
function splitAssignment(arg: string): [string[], string] {
  const i = arg.indexOf('=')
  if (i <= 0) throw new AppError('usage_error', `expected key=value, found "${arg}"`)
  const key = arg.slice(0, i)
  if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(key)) throw new AppError('usage_error', `not a dotted settings key: "${key}"`)
  return [key.split('.'), arg.slice(i + 1)]
}

export default class SettingsSet extends BaseCommand<SetResult> {
  static override description = `Change Hub settings (admin): key=value pairs, sent as one save.

Values are typed by the settings schema (numbers, booleans, lists as a,b or JSON); null clears a key. Maps merge key by key: setting harness_configs.broken.harness keeps every other harness config, and harness_configs.broken=null removes only broken; a list is replaced whole. Only changed fields are sent, with the revisions of their sections as read just before, so a concurrent change is refused (revision_conflict) instead of overwritten. Layer-1 keys go to the database and apply at once; on a workstation Hub bootstrap keys are written to the settings file (restart to apply).`
  static override examples = ['<%= config.bin %> settings set quotas.enforce_broker_quotas=true', '<%= config.bin %> settings set default_timezone=Europe/Paris default_max_turns=null', '<%= config.bin %> settings set harness_configs.claude.env.ANTHROPIC_BASE_URL=http://127.0.0.1:4010']
  static override strict = false
  static override args = {assignments: Args.string({description: 'key=value pairs.', required: true})}
  static override flags = {hub: Flags.string({description: 'Hub URL (default: SVC_HUB_ENDPOINT, settings hub.endpoint, http://127.0.0.1:9810).'})}

  async execute(): Promise<SetResult> {
    const {argv, flags} = await this.parse(SettingsSet)
    const pairs = (argv as string[]).map(splitAssignment)
    const {parseSettingValue} = await import('../../src/config/settings-values.js')
    const {sectionOf, setIn, getIn} = await import('../../src/domain/settings/keys.js')
    const {isDeepStrictEqual} = await import('node:util')
    const client = await this.client(flags.hub)
    const current = await client.call<Record<string, any>>('GET', '/api/v1/admin/server-config')
    const body: Record<string, unknown> = {}
    const revisions: Record<string, number> = {}
    for (const [path, raw] of pairs) {
      let value: unknown
      if (raw === 'null') value = null
      else {
        try {
          value = parseSettingValue(path, raw)
        } catch (err) {
          // Keys the file schema does not list (such as profiling.readiness_marks): JSON, else a string.
          if (!(err instanceof AppError) || !/unknown setting/.test(err.message)) throw err
          try {
            value = JSON.parse(raw)
          } catch {
            value = raw
          }
        }
      }
      if (isDeepStrictEqual(getIn(current, path), value)) continue
      setIn(body, path, value)
      const section = sectionOf(path.join('.'))
      if (section) revisions[section] = current.sections?.[section]?.revision ?? 0
    }
    if (!Object.keys(body).length) return {sections: {}, applied: [], notices: ['nothing to change']}
    return client.call<SetResult>('PUT', '/api/v1/admin/server-config', {...body, revisions})
  }

  protected override human(r: SetResult): string {
    const lines: string[] = []
    for (const [s, v] of Object.entries(r.sections)) lines.push(`${s}: ${v.status} (revision ${v.revision})`)
    if (r.file_keys?.length) lines.push(`settings file: ${r.file_keys.join(', ')}${r.reload?.requires_restart ? ' (restart the Hub to apply)' : ''}`)
    for (const n of r.notices) lines.push(`note: ${n}`)
    return lines.join('\n') || 'nothing changed'
  }
}
