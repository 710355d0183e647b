/** The `podman` runtime: the shared container CLI implementation with the podman binary. */
import {ContainerCliRuntime, type ContainerCliOptions} from './container-cli.js'

export class PodmanRuntime extends ContainerCliRuntime {
  constructor(opts: Omit<ContainerCliOptions, 'cli'> = {}) {
    super({...opts, cli: 'podman'})
  }
}
