/** The runtimes a broker can run agents on, and how to choose one from settings. */
export {LocalTmuxRuntime, type LocalTmuxOptions} from './local-tmux.js'
export {ContainerCliRuntime, type ContainerCliOptions} from './container-cli.js'
export {DockerRuntime} from './docker.js'
export {PodmanRuntime} from './podman.js'
export {KubernetesRuntime, type KubernetesOptions} from './kubernetes.js'
export {createRuntime, defaultRuntime, mergeEnv, selectRuntime, type ProfileSettings, type RuntimeFactoryOptions, type RuntimeSelectionSettings, type RuntimeSettings, type SelectedRuntime} from './select.js'
export {canonicalKey, isNamedKey, NAMED_KEYS} from './keys.js'
