import {Flags} from '@oclif/core'
import {AppError} from '../../src/api/app-error.js'
import {BaseCommand} from '../../src/cli/base-command.js'
import {fields} from '../../src/cli/render.js'
import type {BuildResult} from '../../src/broker/images/build-base.js'

/** With --project: the project image (docs/environments.md) instead of the base image. */
type ImageBuildResult = BuildResult | {image: string; engine: string; built: boolean; project: string}

export default class ImageBuild extends BaseCommand<ImageBuildResult> {
  static override description = `Build the agent base image for a container runtime, from Debian packages; or, with --project, the project's image.

debootstrap (minbase bookworm with tmux, git, ca-certificates) from this host's Debian mirror, imported into podman or docker as localhost/svc-agent-base:<suite>-<recipe hash>: the image agents run when their harness config names none. Needs root and the debootstrap package; no registry is used. Nothing is done when the engine already has the image (unless --force).

With --project: the .svc/Containerfile committed on the project's checkout (HEAD), built FROM the base image (ARG SVC_BASE, FROM \${SVC_BASE}) as localhost/svc-project:<content hash>, the image the project's agents on container runtimes run; a new agent builds it itself when it is missing, this builds it ahead.`
  static override examples = ['<%= config.bin %> image build', '<%= config.bin %> image build --engine docker --mirror http://deb.debian.org/debian', '<%= config.bin %> image build --project my-app']
  static override flags = {
    engine: Flags.string({description: 'Container engine to import the image into.', options: ['podman', 'docker'], default: 'podman'}),
    mirror: Flags.string({description: 'Debian mirror (default: this host\'s apt sources for the suite, else deb.debian.org).'}),
    'cache-dir': Flags.string({description: 'Where the root file system tar is kept between builds (default ~/.cache/svc/images).'}),
    force: Flags.boolean({description: 'Build again even when the image or a cached root file system exists.'}),
    project: Flags.string({description: 'Build this project\'s image from the .svc/Containerfile committed in its checkout on this machine (project ID or slug).'}),
    hub: Flags.string({description: 'Hub URL (with --project).'}),
  }

  async execute(): Promise<ImageBuildResult> {
    const {flags} = await this.parse(ImageBuild)
    const progress = this.json ? undefined : (line: string) => process.stderr.write(`${line}\n`)
    if (flags.project) {
      const {project} = await (await this.client(flags.hub)).getProject(flags.project)
      if (!project.localPath) throw new AppError('usage_error', `project ${project.name} has no checkout on this machine (localPath): run svc image build --project in its checkout's machine`)
      const {committedContainerfile, ensureProjectImage} = await import('../../src/broker/images/project-image.js')
      const text = await committedContainerfile(project.localPath)
      if (text === null) throw new AppError('not_found', `${project.localPath} has no committed .svc/Containerfile on its HEAD`)
      const bin = flags.engine as 'podman' | 'docker'
      const r = await ensureProjectImage({bin, global: [], env: process.env}, text, {progress, force: flags.force})
      return {...r, engine: bin, project: project.id}
    }
    const {buildBaseImage} = await import('../../src/broker/images/build-base.js')
    return buildBaseImage({
      engine: flags.engine as 'podman' | 'docker',
      mirror: flags.mirror,
      cacheDir: flags['cache-dir'],
      force: flags.force,
      progress,
    })
  }

  protected override human(r: ImageBuildResult): string {
    if ('project' in r) return fields([['Image', r.image], ['Engine', r.engine], ['Built', r.built ? 'yes' : 'no: the engine already has it']])
    return fields([
      ['Image', r.image],
      ['Engine', r.engine],
      ['Built', r.built ? (r.rootfsCached ? 'yes (from the cached root file system)' : 'yes') : 'no: the engine already has it'],
      ['Root file system', r.rootfs],
    ])
  }
}
