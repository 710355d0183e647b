/**
 * The local runtime's harness command inside its bubblewrap sandbox (sandbox/policy.ts), with
 * the agent's network and uid (sandbox/isolation.ts) and the one launcher shell inside
 * (sandbox/launcher.ts). Split from local-tmux.ts, which runs it in a tmux session.
 */
import {mkdir} from 'node:fs/promises'
import {join} from 'node:path'
import type {AgentSpec} from '../runtime.js'
import {bwrapProblem, executableReadable, findExecutable, hostSystemPaths, writeSvcShim} from '../sandbox/host.js'
import {harnessStartsLate} from '../sandbox/egress-plan.js'
import {prepareIsolation} from '../sandbox/isolation.js'
import {launcherScript} from '../sandbox/launcher.js'
import {bwrapArgs, sandboxEnv} from '../sandbox/policy.js'
import type {LocalTmuxOptions} from './local-tmux.js'

/**
 * The harness command wrapped in bwrap and its whole environment. Refuses, before any session
 * exists, when bwrap cannot run: an agent must never silently run unsandboxed; `sandbox: none`
 * in settings says so on purpose. `sandboxDir`: the session's directory of its network's sockets
 * and its passwd; `env`: the broker's environment as the runtime uses it.
 */
export async function sandboxedLaunch(opts: LocalTmuxOptions, env: NodeJS.ProcessEnv, spec: AgentSpec, session: string, sandboxDir: string): Promise<{command: string[]; env: Record<string, string>}> {
  const bwrap = findExecutable(opts.bwrap ?? 'bwrap', env.PATH)
  const problem = bwrap ? await bwrapProblem(bwrap) : 'bwrap is not installed or not on PATH'
  if (problem) {
    throw new Error(`the local runtime runs each agent in a bubblewrap sandbox, and bwrap cannot run here (${problem}): install it (Debian: apt-get install bubblewrap), or set \`sandbox: none\` on this runtime in settings (runtimes.<name>.sandbox; runtimes.local.sandbox for the default) to run agents unsandboxed on purpose`)
  }
  // The agent's own HOME: given by the broker, else one per session beside the logs.
  const home = spec.home ?? join(opts.stateDir, 'homes', session)
  await mkdir(home, {recursive: true, mode: 0o700})
  const binDir = join(opts.stateDir, 'sandbox-bin')
  const shim = writeSvcShim(binDir)
  const {system, masked} = hostSystemPaths()
  // Network and uid: fixed here, from the env the broker built from records and from settings.
  const iso = await prepareIsolation(
    {network: 'host', userNamespace: 'required', egressAllow: [], runtimeName: 'local', ...opts.isolation},
    {bwrap: bwrap!, dir: sandboxDir, home, env: spec.egressEnv ?? spec.env, command: spec.command, path: env.PATH, brokerUid: process.getuid?.() ?? -1, overlap: harnessStartsLate(spec.command, spec.prelude)},
  )
  const args = bwrapArgs({
    workdir: spec.workdir,
    home,
    writable: spec.writablePaths ?? [],
    readable: [...(spec.readablePaths ?? []), ...shim.readable, ...executableReadable(spec.command[0]), ...iso.readable],
    system,
    masked,
    ...iso.policy,
  })
  const agentEnv = sandboxEnv({hostEnv: env, passthrough: opts.envPassthrough ?? [], agentEnv: {...spec.env, ...iso.env}, home, binDir})
  // One shell inside takes the variables from fd 3 (ENV_FD_LOADER), starts the forwarders, sets the priority, runs the harness.
  const launcher = launcherScript({forwarders: iso.forwarders, nice: opts.nice ?? 0})
  return {command: [bwrap!, ...args, '--', '/bin/sh', '-c', launcher, 'svc-sandbox', ...(spec.prelude ?? []), ...spec.command], env: agentEnv}
}
