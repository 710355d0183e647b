import {Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {fields} from '../../src/cli/render.js'
import type {BuildResult} from '../../src/broker/images/build-base.js'

export default class ImageBuild extends BaseCommand<BuildResult> {
  static override description = `Build the agent base image for a container runtime, from Debian packages.

debootstrap (minbase bookworm with tmux, git, ca-certificates) from this host's Debian mirror, imported into podman or docker as localhost/svc-agent-base:<suite>-<recipe hash>: the image agents run when their harness config names none. Needs root and the debootstrap package; no registry is used. Nothing is done when the engine already has the image (unless --force).`
  static override examples = ['<%= config.bin %> image build', '<%= config.bin %> image build --engine docker --mirror http://deb.debian.org/debian']
  static override flags = {
    engine: Flags.string({description: 'Container engine to import the image into.', options: ['podman', 'docker'], default: 'podman'}),
    mirror: Flags.string({description: 'Debian mirror (default: this host\'s apt sources for the suite, else deb.debian.org).'}),
    'cache-dir': Flags.string({description: 'Where the root file system tar is kept between builds (default ~/.cache/svc/images).'}),
    force: Flags.boolean({description: 'Build again even when the image or a cached root file system exists.'}),
  }

  async execute(): Promise<BuildResult> {
    const {flags} = await this.parse(ImageBuild)
    const {buildBaseImage} = await import('../../src/broker/images/build-base.js')
    return buildBaseImage({
      engine: flags.engine as 'podman' | 'docker',
      mirror: flags.mirror,
      cacheDir: flags['cache-dir'],
      force: flags.force,
      progress: this.json ? undefined : (line) => process.stderr.write(`${line}\n`),
    })
  }

  protected override human(r: BuildResult): string {
    return fields([
      ['Image', r.image],
      ['Engine', r.engine],
      ['Built', r.built ? (r.rootfsCached ? 'yes (from the cached root file system)' : 'yes') : 'no: the engine already has it'],
      ['Root file system', r.rootfs],
    ])
  }
}
