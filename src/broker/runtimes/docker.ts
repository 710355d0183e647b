/** The `docker` runtime: the shared container CLI implementation with the docker binary. */
import {ContainerCliRuntime, type ContainerCliOptions} from './container-cli.js'

export class DockerRuntime extends ContainerCliRuntime {
  constructor(opts: Omit<ContainerCliOptions, 'cli'> = {}) {
    super({...opts, cli: 'docker'})
  }
}
