import {basename} from 'node:path'
import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {fields} from '../../src/cli/render.js'
import type {Project} from '../../src/client/hub-client.js'

/** Outside a checkout, or where git is not installed, there is nothing to link or read. */
const orNull = <T>(p: Promise<T | null>): Promise<T | null> => p.catch(() => null)

interface RegisterResult {
  project: Project
  created: boolean
  /** The checkout's settings file that now names the project (hub.grove_id), when run in a checkout. */
  linked: string | null
}

export default class ProjectRegister extends BaseCommand<RegisterResult> {
  static override description = `Register a project, or link to the one already registered for the same git remote.

NAME defaults to the checkout's (or the current directory's) name and --remote to the checkout's origin remote. Run inside a git checkout, it also links the checkout: the Hub records its path (agents work in git worktrees of it, on svc/<agent> branches) and hub.grove_id is written to <checkout>/.svc/settings.yaml, so svc commands run there use this project.`
  static override examples = ['<%= config.bin %> project register', '<%= config.bin %> project register demo --remote git@github.com:acme/demo.git']
  static override args = {name: Args.string({description: 'Project name.'})}
  static override flags = {
    remote: Flags.string({description: 'Git remote URL (default: `git remote get-url origin`).'}),
    'no-remote': Flags.boolean({description: 'Register without a git remote.', exclusive: ['remote']}),
    'no-link': Flags.boolean({description: 'Do not link the current checkout (no localPath, no .svc/settings.yaml).'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute() {
    const {args, flags} = await this.parse(ProjectRegister)
    const {checkoutRoot, originUrl} = await import('../../src/broker/workspace/worktree.js')
    const checkout = flags['no-link'] ? null : await orNull(checkoutRoot(process.cwd()))
    const gitRemote = flags['no-remote'] ? null : (flags.remote ?? (await orNull(originUrl(process.cwd()))))
    const name = args.name ?? basename(checkout ?? process.cwd())
    const result = await (await this.client(flags.hub)).registerProject({name, gitRemote, ...(checkout && {localPath: checkout})})
    let linked: string | null = null
    if (checkout) {
      const {linkCheckout} = await import('../../src/config/settings-service.js')
      linked = await linkCheckout(checkout, result.project.id)
    }
    return {...result, linked}
  }

  protected override human({project, created, linked}: RegisterResult): string {
    return [
      created ? `Registered project ${project.name}.` : `Linked to existing project ${project.name}.`,
      fields([
        ['ID', project.id],
        ['Slug', project.slug],
        ['Git remote', project.gitRemote],
        ['Checkout', project.localPath],
      ]),
      linked ? `Linked this checkout (hub.grove_id in ${linked}): agents created here work in worktrees of it.` : `Use it with --project ${project.id}, SVC_HUB_GROVE_ID, or hub.grove_id in .svc/settings.yaml.`,
    ].join('\n')
  }
}
