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

NAME defaults to the checkout's (or the current directory's) name and --remote to the checkout's origin remote. Run inside a git checkout, it also links the checkout: hub.grove_id is written to <checkout>/.svc/settings.yaml, so svc commands run there use this project, and a Hub on this machine (reached at a loopback address, this host's name or one of its addresses) records its path: agents then work in git repositories of their own made from it, each on its branch svc/<agent>, which comes back to the checkout when the agent is merged, pushed or deleted. A Hub elsewhere cannot see the checkout; its agents work in clones of the remote. A --remote naming another repository than the checkout's origin does not link the checkout.`
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
    const {checkoutRoot, originUrl} = await import('../../src/broker/workspace/repository.js')
    const {checkoutLink, excludeLinkFile, hubOnThisMachine, linkNote} = await import('../../src/cli/checkout-link.js')
    const root = flags['no-link'] ? null : await orNull(checkoutRoot(process.cwd()))
    const origin = await orNull(originUrl(process.cwd()))
    const hubLocal = root ? await hubOnThisMachine(await this.endpoint(flags.hub)) : false
    const link = checkoutLink({checkout: root, origin, remoteFlag: flags.remote, noLink: flags['no-link'], hubLocal})
    const gitRemote = flags['no-remote'] ? null : (flags.remote ?? origin)
    const name = args.name ?? basename(root ?? process.cwd())
    const result = await (await this.client(flags.hub)).registerProject({name, gitRemote, ...(link.sendPath && {localPath: link.checkout!})})
    let linked: string | null = null
    if (link.checkout) {
      const {linkCheckout} = await import('../../src/config/settings-service.js')
      linked = await linkCheckout(link.checkout, result.project.id)
      // The link is this user's: keep it out of `git status` (info/exclude, not .gitignore).
      await excludeLinkFile(link.checkout)
    }
    this.note = linkNote(result.project, link, linked)
    return {...result, linked}
  }

  private note = ''

  protected override human({project, created}: RegisterResult): string {
    return [
      created ? `Registered project ${project.name}.` : `Linked to existing project ${project.name}.`,
      fields([
        ['ID', project.id],
        ['Slug', project.slug],
        ['Git remote', project.gitRemote],
        ['Checkout', project.localPath],
      ]),
      this.note,
    ].join('\n')
  }
}
