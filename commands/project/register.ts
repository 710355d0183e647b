import {execFileSync} from 'node:child_process'
import {basename} from 'node:path'
import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {fields} from '../../src/cli/render.js'
import type {Project} from '../../src/client/hub-client.js'

/** The checkout's `origin` remote, when the current directory is a git checkout. */
function originRemote(): string | null {
  try {
    return execFileSync('git', ['remote', 'get-url', 'origin'], {stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000}).toString().trim() || null
  } catch {
    return null
  }
}

export default class ProjectRegister extends BaseCommand<{project: Project; created: boolean}> {
  static override description = `Register a project, or link to the one already registered for the same git remote.

NAME defaults to the current directory's name and --remote to the checkout's origin remote.`
  static override examples = ['<%= config.bin %> project register', '<%= config.bin %> project register demo --remote git@github.com:acme/demo.git']
  static override args = {name: Args.string({description: 'Project name.'})}
  static override flags = {
    remote: Flags.string({description: 'Git remote URL (default: `git remote get-url origin`).'}),
    'no-remote': Flags.boolean({description: 'Register without a git remote.', exclusive: ['remote']}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute() {
    const {args, flags} = await this.parse(ProjectRegister)
    const gitRemote = flags['no-remote'] ? null : (flags.remote ?? originRemote())
    const name = args.name ?? basename(process.cwd())
    return (await this.client(flags.hub)).registerProject({name, gitRemote})
  }

  protected override human({project, created}: {project: Project; created: boolean}): string {
    return [
      created ? `Registered project ${project.name}.` : `Linked to existing project ${project.name}.`,
      fields([
        ['ID', project.id],
        ['Slug', project.slug],
        ['Git remote', project.gitRemote],
      ]),
      `Use it with --project ${project.id}, SVC_HUB_GROVE_ID, or hub.grove_id in .svc/settings.yaml.`,
    ].join('\n')
  }
}
