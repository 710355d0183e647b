import {Args, Flags} from '@oclif/core'
import {AppError} from '../../../src/api/app-error.js'
import {BaseCommand} from '../../../src/cli/base-command.js'
import {fields} from '../../../src/cli/render.js'

interface UserView {
  id: string
  email: string
  displayName: string
  systemAdmin: boolean
  hubRole: string | null
}

export default class AdminUserRole extends BaseCommand<{user: UserView}> {
  static override description = `Set or clear a user's Hub role (admin).

A Hub role gives some admin permissions without making the user a system admin: template_admin manages hub-wide templates (admin.templates.manage) and nothing else. "none" clears the role. The Hub refuses a role it does not define (validation_error).`
  static override examples = ['<%= config.bin %> admin user role carol@example.com template_admin', '<%= config.bin %> admin user role carol@example.com none']
  static override args = {
    user: Args.string({description: 'The user: its ID or e-mail.', required: true}),
    role: Args.string({description: 'A Hub role (template_admin), or none.', required: true}),
  }
  static override flags = {hub: Flags.string({description: 'Hub URL (default: SVC_HUB_ENDPOINT, settings hub.endpoint, http://127.0.0.1:9810).'})}

  async execute(): Promise<{user: UserView}> {
    const {args, flags} = await this.parse(AdminUserRole)
    const client = await this.client(flags.hub)
    let id = args.user
    if (id.includes('@')) {
      // The route takes an ID; an e-mail is looked up in the user list (admins only, like the change).
      const {users} = await client.call<{users: UserView[]}>('GET', '/api/v1/users')
      const found = users.find((u) => u.email.toLowerCase() === id.toLowerCase())
      if (!found) throw new AppError('not_found', `no user with e-mail ${args.user}`)
      id = found.id
    }
    return client.call<{user: UserView}>('PATCH', `/api/v1/users/${encodeURIComponent(id)}`, {hubRole: args.role === 'none' ? null : args.role})
  }

  protected override human({user}: {user: UserView}): string {
    return fields([
      ['User', `${user.displayName} <${user.email}> (${user.id})`],
      ['Hub role', user.hubRole ?? 'none'],
      ['System admin', user.systemAdmin ? 'yes' : 'no'],
    ])
  }
}
