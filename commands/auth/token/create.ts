import {Flags} from '@oclif/core'
import {AppError} from '../../../src/api/app-error.js'
import {BaseCommand} from '../../../src/cli/base-command.js'
import {projectOf} from '../../../src/cli/project-ref.js'
import {fields} from '../../../src/cli/render.js'
import type {AccessTokenView} from '../../../src/client/hub-client.js'
import {parseDuration} from '../../../src/domain/shared/clock.js'

type Created = AccessTokenView & {token: string}

export default class TokenCreate extends BaseCommand<Created> {
  static override description = 'Create a user access token bounded to one project and a set of permissions. The secret is shown once.'
  static override examples = ['<%= config.bin %> auth token create --name ci --project demo --permission project.read --permission agent.list --expires 30d']
  static override flags = {
    name: Flags.string({description: 'Name of the token.', required: true}),
    project: Flags.string({description: 'Project the token is bounded to (default: the current project).'}),
    permission: Flags.string({description: 'Permission the token carries (repeat for several).', multiple: true, required: true}),
    expires: Flags.string({description: 'Lifetime (e.g. 30d, 12h) or an ISO-8601 time; default 90 days.'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute(): Promise<Created> {
    const {flags} = await this.parse(TokenCreate)
    let expiresAt: string | undefined
    if (flags.expires) {
      const ms = parseDuration(flags.expires)
      const at = ms !== null ? Date.now() + ms : Date.parse(flags.expires)
      if (Number.isNaN(at)) throw new AppError('usage_error', `--expires: expected a duration like 30d or an ISO-8601 time, found "${flags.expires}"`)
      expiresAt = new Date(at).toISOString()
    }
    const projectId = projectOf(flags.project, await this.settings())
    const client = await this.client(flags.hub)
    // Accept a slug too: the API takes the project's ID.
    const {project} = await client.getProject(projectId)
    return client.createToken({name: flags.name, projectId: project.id, permissions: flags.permission, expiresAt})
  }

  protected override human(t: Created): string {
    return [
      fields([
        ['ID', t.id],
        ['Name', t.name],
        ['Project', t.projectId],
        ['Permissions', t.permissions.join(', ')],
        ['Expires', t.expiresAt],
      ]),
      '',
      'Token (shown once; store it now):',
      t.token,
    ].join('\n')
  }
}
