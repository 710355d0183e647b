/**
 * How a broker starts an agent, the same for every harness: find the harness's executable, make
 * (or reuse) the agent's git workspace and its own HOME, let the harness module write its config,
 * then start `[executable, ...args]` on the runtime in the workspace. Refusals come before
 * anything is made; a failure after that removes what this start made.
 */
import {existsSync, mkdirSync, realpathSync, rmSync} from 'node:fs'
import {homedir} from 'node:os'
import {basename, dirname, join, resolve, sep} from 'node:path'
import type {AgentWorkspace} from '../api/dto.js'
import {resolveHarness, type HarnessConfig} from './harness.js'
import {prepareHarnessHome} from './harnesses/prepare-home.js'
import {writeHomeFile} from './harnesses/json-file.js'
import {harnessModule} from './harnesses/registry.js'
import type {LaunchContext} from './harnesses/types.js'
import type {Runtime, RuntimeHandle} from './runtime.js'
import {projectImageFor} from './images/project-image.js'
import {selfCommand} from './self-command.js'
import {executableReadable, findExecutable, nodeInterpreter} from './sandbox/host.js'
import {isLegacyWorkspace, legacyRefusal, readRecord, repoMounts, type AgentRepoPaths} from './workspace/agent-repo.js'
import {makeEnvironment, recordedSetup} from './workspace/environment.js'
import {WorkspaceRefusal} from './workspace/refusal.js'
import {awaitSetup, clearSetupStatus, SetupFailed, setupPrelude, type SetupPlan} from './workspace/setup.js'
import {agentRepoPaths, createWorkspace, reattachWorkspace, removeWorkspace, type WorkspaceRequest} from './workspace/repository.js'

/** A refusal with a code the Hub passes on (`harness_not_installed`, the workspace codes, ...). */
export class LaunchError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message)
  }
}

/** `agent.start` parameters from the Hub. */
export interface StartParams {
  agentId: string
  name: string
  projectId: string
  harnessConfig: string
  harness?: HarnessConfig
  task?: string | null
  /** Agent environment and delivered secrets. */
  env: Record<string, string>
  /** The agent's template files (base64), laid out in its working directory. */
  templateFiles?: Array<{path: string; content: string}>
  /** Where the workspace comes from; absent for a project with no checkout and no remote. */
  workspace?: WorkspaceRequest | null
  /** The workspace the agent already has (a restart): reused, and its session resumed. */
  existingWorkspace?: AgentWorkspace | null
  model?: string | null
  thinkingLevel?: string | null
  /** Milliseconds from start after which the broker stops the agent (`max_duration`). */
  maxDurationMs?: number | null
  /** Secrets of type `file`: written at `target` inside the agent's HOME (mode 0600), never in its workspace. */
  secretFiles?: Array<{target: string; value: string}>
  /** The runtime the agent was first dispatched on (a restart stays there); absent: the default. */
  runtime?: string
  /** The image it was first dispatched with (container runtimes); absent: the harness's, else the runtime's. */
  image?: string
  /** The Hub's settings section `workspace` (copied files, setup): under this machine's and the project's files. */
  environment?: unknown
  /** A restart that runs the setup recorded at create again (`svc agent restart --setup`). */
  runSetup?: boolean
}

export interface LaunchDeps {
  stateDir: string
  hubUrl: string
  runtime: Runtime
  runtimeEnv?: Record<string, string>
  /** Lays template files out under a directory (broker.ts writeTemplateFiles). */
  writeTemplateFiles(dir: string, files: Array<{path: string; content: string}>): void
}

export interface Launched {
  handle: RuntimeHandle
  workspace: AgentWorkspace | null
  /** Paste this into the terminal once it runs (a harness that takes no task on its command line). */
  pasteTask?: string
}

export const agentHome = (stateDir: string, agentId: string) => join(stateDir, 'homes', agentId)
export const agentWorkdir = (stateDir: string, agentId: string) => join(stateDir, 'workspaces', agentId)
/** The agent's token, kept fresh by the broker; the agent's svc reads it (SVC_AUTH_TOKEN_FILE). */
export const agentTokenFile = (home: string) => join(home, '.svc', 'agent-token')

/**
 * A harness CLI in a container without a harness image: the agent base image has none, so the
 * broker's own npm installation (found on its PATH, inside a node_modules tree) is mounted
 * read-only at its host path and run from there, as the svc program is. Answers the paths to
 * mount, the executable first; none when the local runtime runs it, when the harness config
 * names an image (that image brings its own), or when it is not an npm installation (a system
 * program such as the shell's is the image's own).
 */
function containerHarness(runtime: Runtime, mod: ReturnType<typeof harnessModule>, image: string | undefined, executable: string, path: string | undefined): string[] {
  if (runtime.type === 'local' || image || !mod || mod.type === 'shell') return []
  const found = findExecutable(executable, path ?? process.env.PATH)
  const paths = found ? executableReadable(found) : []
  return paths.length === 2 && paths[1].endsWith('/node_modules') ? paths : []
}

/**
 * Where a new agent's work tree will be, as the workspace answers it (repository.ts: its real
 * path), before it exists: its parent directory is made (as the workspace's making would) and resolved.
 */
function newWorkdirPath(paths: AgentRepoPaths): string {
  mkdirSync(dirname(paths.workdir), {recursive: true, mode: 0o700})
  return join(realpathSync(dirname(paths.workdir)), basename(paths.workdir))
}

interface HomeInput {
  resolved: ReturnType<typeof resolveHarness>
  mod: ReturnType<typeof harnessModule>
  launcher: string[]
  baseEnv: Record<string, string>
  home: string
  workdir: string
  resume: boolean
}

/**
 * The agent's HOME (its token, secret files, the harness's config for `workdir`) and the command
 * and environment it starts with. Reads nothing of the work tree, so it may run while the work
 * tree is being made; a harness module's prepare must keep to that.
 */
async function prepareHome(p: StartParams, d: LaunchDeps, h: HomeInput): Promise<{workdir: string; env: Record<string, string>; command: string[]; harnessEnv: Record<string, string>; pasteTask?: string}> {
  const {resolved, mod, launcher, baseEnv, home, workdir, resume} = h
  mkdirSync(home, {recursive: true, mode: 0o700})
  // The HOME is the agent's: written without following a link it may have planted (a restart).
  if (p.env.SVC_AUTH_TOKEN) await writeHomeFile(agentTokenFile(home), p.env.SVC_AUTH_TOKEN + '\n')
  for (const f of p.secretFiles ?? []) {
    const target = resolve(home, f.target.replace(/^~\//, ''))
    if (!target.startsWith(home + sep)) throw new LaunchError('workspace_failed', `secret file target ${JSON.stringify(f.target)} is outside the agent's HOME`)
    await writeHomeFile(target, f.value)
  }
  const env: Record<string, string> = {...baseEnv, ...p.env, HOME: home, SVC_HUB_ENDPOINT: d.hubUrl, SVC_AUTH_TOKEN_FILE: agentTokenFile(home)}
  const task = !resume && p.task ? p.task : undefined
  if (!mod) {
    const command = [...launcher, ...resolved.command.slice(1)]
    if (task) command.push(...(resolved.taskFlag ? [resolved.taskFlag, task] : [task]))
    return {workdir, env, command, harnessEnv: {}}
  }
  const ctx: LaunchContext = {
    agentId: p.agentId,
    agentName: p.name,
    home,
    workdir,
    task: resolved.taskFlag ? undefined : task,
    model: p.model ?? resolved.model ?? undefined,
    thinkingLevel: p.thinkingLevel === 'none' ? 'off' : (p.thinkingLevel ?? undefined),
    resume,
    env,
    authType: resolved.authType ?? mod.auth.default,
    hookCommand: [...selfCommand(), 'hook', mod.type],
    userHome: process.env.HOME || homedir(),
  }
  const harnessEnv = mod.env?.(ctx) ?? {}
  Object.assign(env, harnessEnv)
  await prepareHarnessHome(mod, ctx)
  const command = [...launcher, ...resolved.args, ...mod.args(ctx)]
  let pasteTask: string | undefined
  if (task && resolved.taskFlag) command.push(resolved.taskFlag, task)
  else if (task && !mod.taskInArgs) pasteTask = task
  return {workdir, env, command, harnessEnv, pasteTask}
}

export async function launchAgent(p: StartParams, d: LaunchDeps): Promise<Launched> {
  const resolved = resolveHarness(p.harnessConfig, {configs: p.harness ? {[p.harnessConfig]: p.harness} : undefined})
  const mod = harnessModule(resolved.harness)
  const baseEnv = {...d.runtimeEnv, ...resolved.env}
  // The executable must be here before anything is made (a container brings its own).
  let executable = mod?.executable ?? resolved.command[0]
  const harnessPaths = containerHarness(d.runtime, mod, resolved.image, executable, baseEnv.PATH)
  if (harnessPaths.length) executable = harnessPaths[0]
  if (d.runtime.type === 'local') {
    const found = findExecutable(executable, baseEnv.PATH ?? process.env.PATH)
    if (!found) {
      const what = mod ? `${mod.displayName} (\`${mod.executable}\`)` : `\`${executable}\``
      throw new LaunchError('harness_not_installed', `${what} is not installed on this broker's PATH${mod ? `: ${mod.install}` : ''}`, {harness: resolved.harness, executable})
    }
    executable = found
  }
  // A Node script of this host (npm's launchers of Codex and Gemini CLI) runs with this host's
  // node named outright and mounted read-only: a container image or a sandbox need not have node
  // on its PATH. Not a command of a container's own image (harness CLI not mounted from here).
  const node = d.runtime.type === 'local' || harnessPaths.length ? nodeInterpreter(executable, baseEnv.PATH ?? process.env.PATH) : undefined
  const launcher = node ? [...node, executable] : [executable]

  // The runtime's own checks of this start (local: whether its tmux session exists) run while the workspace is made.
  d.runtime.prepareStart?.(p.agentId)
  const home = agentHome(d.stateDir, p.agentId)
  let workspace: AgentWorkspace | null = p.existingWorkspace ?? null
  // What this start made, removed again if it fails: a new workspace with its branch, or a
  // workspace put back on the agent's existing branch (which stays).
  let made: 'new' | 'reattached' | null = null
  const paths = agentRepoPaths(d.stateDir, p.agentId)
  const path = paths.workdir
  let setup: SetupPlan | null = null
  // A restart resumes the harness's session (kept in its HOME), whether or not its directory had to be put back.
  const resume = p.existingWorkspace != null
  const home$ = (workdir: string) => prepareHome(p, d, {resolved, mod, launcher, baseEnv, home, workdir, resume})
  // A new agent's HOME and harness config are written while its repository is made (git runs
  // in another process meanwhile): they need only the work tree's path, never its files.
  let early: ReturnType<typeof home$> | undefined
  try {
    // A worktree of the checkout (made by an older svc) would give the agent the checkout's refs.
    if (workspace && isLegacyWorkspace(paths)) throw legacyRefusal(paths)
    if (workspace && !existsSync(paths.workdir)) {
      // A restart whose directory vanished: back on its own branch, never a new one (a new one
      // would be refused, its branch existing, and the way out offered would delete the work).
      workspace = await reattachWorkspace(p.workspace ?? {branch: workspace.branch}, workspace, paths)
      made = 'reattached'
    } else if (!workspace) {
      // Left by a start the Hub never recorded (it gave up waiting): removed as any workspace
      // is, so a clone's unpushed commits are kept (kept-branches), never deleted.
      if (p.workspace && (existsSync(path) || existsSync(paths.gitDir))) await removeWorkspace(paths, {path, branch: p.workspace.branch, baseRef: '', baseCommit: ''})
      const w = p.workspace
      early = home$(w && (w.parent || w.checkout || w.gitRemote) ? newWorkdirPath(paths) : path)
      // Its failure is seen when it is awaited below; a refusal of the workspace comes first.
      early.catch(() => {})
      workspace = p.workspace ? await createWorkspace(p.workspace, paths) : null
      if (workspace) made = 'new'
      else mkdirSync(path, {recursive: true})
    }
    // A new work tree gets its copied files and its setup now, before anything runs in it; a
    // restart runs the setup decided then, and only when asked.
    if (made === 'new') setup = (await makeEnvironment(paths, p.environment)).setup
    else if (p.runSetup && workspace) setup = recordedSetup(paths)
  } catch (err) {
    await early?.catch(() => {})
    if (made === 'new') await removeWorkspace(paths, workspace, {removeBranch: true}).catch(() => {})
    if (early) rmSync(home, {recursive: true, force: true})
    if (err instanceof WorkspaceRefusal) throw new LaunchError(err.code, err.message, err.details)
    throw err
  }
  const workdir = workspace?.path ?? path
  try {
    // Written for another path (never expected: the work tree's real path is known before it is made): written again.
    let prepared = early ? await early : undefined
    if (!prepared || prepared.workdir !== workdir) prepared = await home$(workdir)
    const {env, command, harnessEnv, pasteTask} = prepared
    if (!resume) d.writeTemplateFiles(workdir, p.templateFiles ?? [])
    // The agent's own repository is writable, the checkout's objects it borrows are readable:
    // both from the record svc wrote when the agent was made, never from the work tree's files.
    const rec = workspace ? readRecord(paths) : null
    if (workspace && !rec) throw new LaunchError('workspace_missing', `the agent's repository ${paths.gitDir} is missing on this broker`, {path: paths.gitDir})
    const git = rec ? repoMounts(paths, rec) : {readable: [], writable: []}
    // The setup runs where the broker can read its exit code: in a session on this host or a container with its HOME mounted.
    if (setup && d.runtime.type === 'kubernetes') throw new LaunchError('workspace_failed', `the project's setup (${setup.from}) cannot run on the kubernetes runtime yet: run the agent on local, podman or docker`)
    if (setup) clearSetupStatus(home)
    // A new agent on a container engine runs its project's image when the project has one (kept by restarts: the Hub sends `image`).
    const image = p.image ?? resolved.image ?? (made === 'new' ? await projectImageFor(d.runtime, workdir, {parent: !!p.workspace?.parent, checkout: rec?.checkout ?? null}).catch((err: Error) => {
      throw new LaunchError('image_build_failed', err.message)
    }) : undefined)
    const handle = await d.runtime.start({
      agentId: p.agentId,
      name: p.name,
      projectId: p.projectId,
      command,
      ...(setup && {prelude: setupPrelude(setup, home)}),
      env,
      egressEnv: {...baseEnv, ...harnessEnv, SVC_HUB_ENDPOINT: d.hubUrl},
      image,
      workdir,
      home,
      writablePaths: git.writable,
      readablePaths: [...git.readable, ...harnessPaths, ...(node ? [node[0]!] : []), ...selfCommand().map((f) => (f === process.execPath ? f : dirname(dirname(f))))],
      resources: resolved.resources,
    })
    if (setup) {
      // The secrets it was given are masked in the lines a failure quotes.
      const secrets = [p.env.SVC_AUTH_TOKEN ?? '', ...Object.entries(p.env).filter(([k]) => !k.startsWith('SVC_') && k !== 'TZ').map(([, v]) => v), ...(p.secretFiles ?? []).map((f) => f.value)]
      await awaitSetup(d.runtime, handle, home, setup, secrets).catch((err) => {
        throw err instanceof SetupFailed ? new LaunchError('setup_failed', err.message) : err
      })
    }
    return {handle, workspace, pasteTask}
  } catch (err) {
    if (made === 'new') await removeWorkspace(paths, workspace, {removeBranch: true}).catch(() => {})
    else if (made === 'reattached') rmSync(paths.workdir, {recursive: true, force: true})
    if (!resume) rmSync(home, {recursive: true, force: true})
    throw err
  }
}
