import {createHash} from 'node:crypto'
import {createReadStream} from 'node:fs'
import {stat} from 'node:fs/promises'
import {basename} from 'node:path'
import {pipeline} from 'node:stream/promises'
import {Args, Flags} from '@oclif/core'
import {AppError} from '../../src/api/app-error.js'
import {parseArtifactRef} from '../../src/api/artifact-ref.js'
import {BaseCommand} from '../../src/cli/base-command.js'
import {progressBar} from '../../src/cli/progress.js'
import type {ArtifactResult} from '../../src/client/hub-client.js'

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256')
  await pipeline(createReadStream(file, {highWaterMark: 1024 * 1024}), hash)
  return hash.digest('hex')
}

export default class ArtifactPublish extends BaseCommand<ArtifactResult> {
  static override description = `Publish a file as an artifact and print its reference and page URL.

The file's SHA-256 is sent with it and checked by the Hub. An agent (SVC_AUTH_TOKEN holding an agent token) publishes into its own project; a user publishes into the current project (--project, SVC_HUB_GROVE_ID, or hub.grove_id).`
  static override examples = ['<%= config.bin %> artifact publish report.md --title "Weekly report"', '<%= config.bin %> artifact publish build.log --to svc://artifact/<id>']
  static override args = {file: Args.string({description: 'Regular file to publish.', required: true})}
  static override flags = {
    title: Flags.string({description: 'Title (default: the file name).'}),
    project: Flags.string({description: 'Project to publish into (default: the current project; an agent\'s own project).'}),
    to: Flags.string({description: 'Publish as the next version of this artifact (one you own) instead of a new artifact.'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute(): Promise<ArtifactResult> {
    const {args, flags} = await this.parse(ArtifactPublish)
    let size: number
    try {
      const st = await stat(args.file)
      if (!st.isFile()) throw new AppError('usage_error', `${args.file} is not a regular file`)
      size = st.size
    } catch (err) {
      if (err instanceof AppError) throw err
      throw new AppError('usage_error', `cannot read ${args.file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
    }
    const target = flags.to ? parseArtifactRef(flags.to) : null
    if (flags.to && !target) throw new AppError('usage_error', `--to: not an artifact reference: "${flags.to}"`)
    if (target && (flags.title || flags.project)) throw new AppError('usage_error', '--to publishes a new version: --title and --project do not apply')

    // An agent's artifacts are homed in its own project, which the Hub knows from the token.
    const agentMode = (process.env.SVC_AUTH_TOKEN ?? '').startsWith('svc_agt_')
    let scope: string | undefined = flags.project
    if (!target && !agentMode && !scope) {
      scope = (await this.settings()).groveId ?? undefined
      if (!scope) throw new AppError('usage_error', 'no project: pass --project, set SVC_HUB_GROVE_ID, or set hub.grove_id in .svc/settings.yaml')
    }
    const client = await this.client(flags.hub)
    const sha256 = await sha256Of(args.file)
    const bar = progressBar('uploading', size)
    try {
      return await client.publishArtifact(args.file, size, {name: basename(args.file), title: flags.title, scope, artifactId: target?.id}, sha256, bar.onProgress)
    } finally {
      bar.done()
    }
  }

  protected override human(r: ArtifactResult): string {
    return `Published ${r.version.ref} (${r.artifact.title})\n${r.url}`
  }
}
