import type {RunningAgent} from './agent-registry.js'
import type {Runtime} from './runtime.js'
import type {RuntimeSettings} from './runtimes/select.js'

/** A refusal of the broker's, sent to the Hub with its code. */
export class BrokerError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

/** A runtime with the name, settings entry and environment it was selected with. */
export interface SelectedRuntimeRef {
  runtime: Runtime
  runtimeName: string
  settings: RuntimeSettings
  env?: Record<string, string>
}

export interface BrokerRuntimesOptions {
  /** The default runtime (and its environment, name and entry) new agents start on. */
  initial: SelectedRuntimeRef
  /** Builds a runtime from a recorded name and entry (without it: only runtimes used since start). */
  createRuntime?: (name: string, settings: RuntimeSettings) => Runtime
  /** The runtime of a name the Hub asks for; throws when unknown. */
  resolveRuntime?: (name: string) => SelectedRuntimeRef
}

const builtKey = (name: string, settings: RuntimeSettings) => JSON.stringify([name, settings])

/**
 * Which runtime each agent of a broker runs on. New agents start on the default (which a
 * settings save may switch) or on the one the Hub names; an agent already running is always
 * reached through the runtime it started on, rebuilt from what the registry recorded, never
 * through the current default (a local handle given to the podman runtime is how agents used to
 * be orphaned). Each name and entry is built once.
 */
export class BrokerRuntimes {
  private selected: SelectedRuntimeRef
  private readonly built = new Map<string, Runtime>()

  constructor(private readonly opts: BrokerRuntimesOptions) {
    this.selected = opts.initial
    this.built.set(builtKey(opts.initial.runtimeName, opts.initial.settings), opts.initial.runtime)
  }

  /** The default new agents start on. */
  get current(): SelectedRuntimeRef {
    return this.selected
  }

  /** Switches the default for agents started from now on; running agents stay where they are. */
  setCurrent(sel: SelectedRuntimeRef): void {
    this.selected = sel
    this.built.set(builtKey(sel.runtimeName, sel.settings), sel.runtime)
  }

  /** The runtime an agent started on, from what the registry recorded. */
  of(a: RunningAgent): Runtime {
    return this.build(a.runtimeName ?? a.handle.runtime, a.runtimeSettings ?? {type: a.handle.runtime})
  }

  /** The runtime a start uses: the one the Hub names (the agent's first), else the default. */
  forStart(requested: string | undefined): SelectedRuntimeRef {
    if (!requested || requested === this.selected.runtimeName) return this.selected
    let sel: SelectedRuntimeRef
    try {
      sel = this.opts.resolveRuntime ? this.opts.resolveRuntime(requested) : {runtime: this.build(requested, {type: requested}), runtimeName: requested, settings: {type: requested}}
    } catch (err) {
      throw new BrokerError('runtime_unavailable', `this agent runs on runtime ${JSON.stringify(requested)}, which this broker cannot use now: ${(err as Error).message}`)
    }
    const key = builtKey(sel.runtimeName, sel.settings)
    const known = this.built.get(key)
    if (known) return {...sel, runtime: known}
    this.built.set(key, sel.runtime)
    return sel
  }

  private build(name: string, settings: RuntimeSettings): Runtime {
    const key = builtKey(name, settings)
    let rt = this.built.get(key)
    if (rt) return rt
    if (this.opts.createRuntime) rt = this.opts.createRuntime(name, settings)
    else rt = [...this.built.values()].find((r) => r.type === settings.type)
    if (!rt) throw new BrokerError('runtime_unavailable', `runtime ${JSON.stringify(name)} (${settings.type}) is not available on this broker`)
    this.built.set(key, rt)
    return rt
  }
}
