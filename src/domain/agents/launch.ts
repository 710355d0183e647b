/**
 * Sending an agent to its broker and taking it back: the `agent.start` request (harness, task,
 * workspace, model, limits, agent environment and delivered secrets) and `agent.stop`. Split out
 * of agents-service.ts so that file keeps the lifecycle and this one the broker's side of it.
 */
import {AppError} from '../../api/app-error.js'
import type {AgentRecord} from '../../store/repositories/agents.js'
import type {DeletedBranchDto} from '../../api/dto.js'
import {parseDuration, iso} from '../shared/clock.js'
import type {Deps} from '../deps.js'
import {BUILTIN_HARNESS_CONFIGS, type HarnessConfigSetting} from './agent-settings.js'
import type {AgentServiceDeps} from './agents-service.js'
import {missingNeeds, secretNeeds, type SecretNeed} from './harness-needs.js'
import {cloneSource} from '../projects/clone-url.js'
import {maskPatterns, maskText, SECRET_NAME} from './log-masking.js'
import {agentPortEnv} from '../ports/port-blocks.js'

// Keep at most this much of an agent's output when it ends.
const MAX_ARCHIVE_BYTES = 4 * 1024 * 1024

/** Broker refusals that mean nothing was made: passed on with their own code, not as broker_error. */
const LAUNCH_REFUSALS = new Set(['harness_not_installed', 'checkout_invalid', 'checkout_detached', 'checkout_dirty', 'branch_exists', 'clone_failed', 'workspace_failed', 'workspace_missing', 'workspace_legacy', 'runtime_unavailable'])

/** Broker failures of the project's own environment (docs/environments.md): the agent's `error` is their message. */
const PROJECT_FAILURES = new Set(['setup_failed', 'image_build_failed'])

/** The broker's refusal as the AppError it stands for, or null for any other failure. */
export function launchRefusal(err: unknown): AppError | null {
  if (!(err instanceof AppError) || err.code !== 'broker_error') return null
  const {brokerCode, ...details} = (err.details ?? {}) as Record<string, unknown>
  if (typeof brokerCode !== 'string' || !LAUNCH_REFUSALS.has(brokerCode)) return null
  return new AppError(brokerCode as never, err.message.replace(/^broker: /, ''), Object.keys(details).length ? details : undefined)
}

/** A value of the agent's applied settings (`config.applied[field].value`). */
function applied(agent: AgentRecord, field: string): unknown {
  return (agent.config.applied as Record<string, {value: unknown}> | undefined)?.[field]?.value
}

/** The user an agent's user-scope secrets belong to: its creator, or its creating agent's user. */
async function ownerOf(deps: Deps, agent: AgentRecord): Promise<string | null> {
  let by = agent.createdBy
  for (let hops = 0; by.kind === 'agent' && hops < 32; hops++) {
    const parent = await deps.store.agents.get(by.id)
    if (!parent) return null
    by = parent.createdBy
  }
  return by.kind === 'user' ? by.id : null
}

export type SecretValues = (projectId: string, userId: string | null, keys: string[]) => Promise<Record<string, string>>

export function createLauncher(deps: Deps, a: AgentServiceDeps, secretValues: () => SecretValues) {
  const {store, clock} = deps
  const now = () => iso(clock.now())

  /** The current version's files of a template (base64), for the broker to lay out. */
  async function templateFilesOf(templateId: string): Promise<Array<{path: string; content: string}> | undefined> {
    const t = await store.templates.get(templateId)
    if (!t) return undefined
    const versions = await store.templates.versions(templateId)
    const current = versions.find((v) => v.seq === t.currentVersion)
    if (!current) return undefined
    const out: Array<{path: string; content: string}> = []
    for (const m of current.manifest) out.push({path: m.path, content: (await store.templates.file(templateId, current.seq, m.path)) ?? ''})
    return out
  }

  // Secret values sent with each agent's start by this process: a secret rotated since stays masked.
  const delivered = new Map<string, string[]>()

  /** Values of a harness config's `env` that are secrets: a need's key, or a secret-like name. */
  function configSecretEnv(cfg: HarnessConfigSetting | undefined, needs: SecretNeed[]): string[] {
    const keys = new Set(needs.map((n) => n.key))
    return Object.entries(cfg?.env ?? {}).filter(([k, v]) => typeof v === 'string' && (keys.has(k) || SECRET_NAME.test(k))).map(([, v]) => v)
  }

  /**
   * Every secret value the agent's harness was given or would be given now (its harness
   * config's needs and secret env values, and what this process sent at its start), for
   * masking its output (log-masking.ts).
   */
  async function secretValuesOf(agent: AgentRecord): Promise<string[]> {
    const out = new Set(delivered.get(agent.id) ?? [])
    const cfg = (await a.settings()).harnessConfigs[agent.harnessConfig]
    if (!cfg) return [...out]
    let needs: SecretNeed[] = []
    try {
      needs = secretNeeds(agent.harnessConfig, cfg)
    } catch {
      // A config broken since the start: its env values are still masked below.
    }
    for (const v of configSecretEnv(cfg, needs)) out.add(v)
    if (needs.length) for (const v of Object.values(await secretValues()(agent.projectId, await ownerOf(deps, agent), needs.map((n) => n.key)))) out.add(v)
    return [...out]
  }

  /** Keeps the agent's output, its secrets masked (a failed look-up keeps it as is: serving masks again). */
  async function archive(agentId: string, base64: string | undefined) {
    if (!base64) return
    let text = Buffer.from(base64, 'base64').toString('utf8')
    const agent = await store.agents.get(agentId)
    if (agent) {
      text = await secretValuesOf(agent).then(
        (values) => maskText(text, maskPatterns(values)),
        (err) => (deps.logger.warn({agentId, err: (err as Error).message}, 'reading secrets to mask an archived log failed'), text),
      )
    }
    if (text.length > MAX_ARCHIVE_BYTES) text = text.slice(-MAX_ARCHIVE_BYTES)
    return store.agents.putLogArchive(agentId, text, now())
  }

  /**
   * The secrets the agent's harness config needs and their values. Throws `missing_secrets`
   * (422, `details.missing`) naming every need nothing provides.
   */
  async function gatherSecrets(agent: Pick<AgentRecord, 'projectId' | 'createdBy' | 'id'>, configName: string, cfg: HarnessConfigSetting): Promise<{needs: SecretNeed[]; values: Record<string, string>}> {
    const needs = secretNeeds(configName, cfg)
    if (needs.length === 0) return {needs, values: {}}
    const owner = await ownerOf(deps, agent as AgentRecord)
    const values = await secretValues()(agent.projectId, owner, needs.map((n) => n.key))
    const missing = missingNeeds(needs, cfg, new Set(Object.keys(values)))
    if (missing.length) {
      throw new AppError('missing_secrets', `harness config ${configName} needs ${missing.map((m) => m.key).join(', ')}: set ${missing.length === 1 ? 'it' : 'them'} as project or user secrets (svc agent create asks for them on a terminal, or takes --secret KEY=VALUE)`, {
        missing: missing.map((m) => ({key: m.key, description: m.description})),
      })
    }
    return {needs, values}
  }

  /** Where the broker gets the workspace: the checkout (on the co-located broker's machine) or the remote. */
  async function workspaceRequest(agent: AgentRecord) {
    const project = await store.projects.get(agent.projectId)
    const branch = agentBranch(agent.name)
    // The checkout is on the Hub's host: used by its co-located broker, whichever replica dispatches.
    const onHubHost = agent.brokerId === a.colocatedBrokerId() || (!!agent.brokerId && (await store.brokers.get(agent.brokerId))?.colocated === true)
    const checkout = project?.localPath && onHubHost ? project.localPath : null
    const remote = project ? cloneSource(project) : null
    if (!checkout && !remote) return null
    // Teams: a child's branch starts from its parent's branch head, in the parent's repository on
    // the same broker (the broker refuses when the parent's repository is not there).
    const parent = agent.parent ? await store.agents.get(agent.parent.id) : null
    const fromParent = parent?.workspace && parent.brokerId === agent.brokerId ? {agentId: parent.id, branch: parent.workspace.branch} : undefined
    return {checkout, gitRemote: remote, branch, ...(fromParent && {parent: fromParent})}
  }

  /**
   * The activity of an agent whose harness has just started and reported nothing yet, never
   * blank: `thinking` when it was given its task (a harness with hooks reports from there on),
   * else `idle` (a resumed session, or one with no task, waits for a message; a shell reports
   * nothing). The broker gives the task only on a first start (no workspace yet: agent-launch.ts).
   */
  function firstActivity(agent: AgentRecord, harness: string | undefined): string {
    const taskGiven = !!agent.task && !agent.workspace
    return taskGiven && harness !== undefined && harness !== 'shell' ? 'thinking' : 'idle'
  }

  /**
   * Sends the start command; the agent is running when the broker answers. A refusal that made
   * nothing (launchRefusal) is thrown; any other failure leaves the agent in phase `error`.
   */
  async function dispatch(agent: AgentRecord, opts: {runSetup?: boolean} = {}): Promise<AgentRecord> {
    // Everything from here on is inside the try: whatever fails, the agent ends in phase
    // `error` (or the refusal is passed on), never left in `provisioning`.
    try {
      const settings = await a.settings()
      const configured = settings.harnessConfigs[agent.harnessConfig]
      const {needs, values} = configured ? await gatherSecrets(agent, agent.harnessConfig, configured) : {needs: [], values: {}}
      delivered.set(agent.id, [...Object.values(values), ...configSecretEnv(configured, needs)])
      const {token} = await a.tokens.mint(agent)
      // The built-in `shell` is the broker's own (with its prompt); every other config is sent as
      // the Hub has it, so a broker that does not know a built-in name still runs it.
      const harness = BUILTIN_HARNESS_CONFIGS[agent.harnessConfig] === configured && configured?.harness === 'shell' ? undefined : configured
      const templateFiles = agent.template ? await templateFilesOf(agent.template) : undefined
      const env: Record<string, string> = {}
      const secretFiles: Array<{target: string; value: string}> = []
      for (const n of needs) {
        if (values[n.key] === undefined) continue
        if (n.type === 'file') secretFiles.push({target: n.target!, value: values[n.key]})
        else env[n.key] = values[n.key]
      }
      const tz = applied(agent, 'defaultTimezone')
      // Its block of ports on its broker (SVC_PORTS, PORT), the same on every start.
      const ports = await agentPortEnv(store, agent, now())
      const maxDuration = applied(agent, 'defaultMaxDuration')
      // Reports the harness makes while the broker is still answering (its first hook can come
      // first) are kept as its activity; see firstActivity.
      const mark = a.status.readMark()
      const res = await a.gateway.request<{runtime: string; ref: string; workspace?: AgentRecord['workspace']; image?: string | null; sandbox?: string | null}>(
        agent.brokerId!,
        'agent.start',
        {
          agentId: agent.id,
          name: agent.name,
          projectId: agent.projectId,
          harnessConfig: agent.harnessConfig,
          harness,
          templateFiles,
          task: agent.task,
          // An agent keeps the runtime and image of its first dispatch (a restart never moves it).
          ...(agent.runtime && {runtime: agent.runtime}),
          ...(agent.image && {image: agent.image}),
          workspace: await workspaceRequest(agent),
          existingWorkspace: agent.workspace,
          // Copied files and setup of a new workspace (the broker puts the project's and its own files over it).
          ...(settings.workspace != null && {environment: settings.workspace}),
          ...(opts.runSetup && {runSetup: true}),
          model: (applied(agent, 'defaultModel') as string | null | undefined) ?? null,
          thinkingLevel: (applied(agent, 'defaultThinkingLevel') as string | null | undefined) ?? null,
          maxDurationMs: typeof maxDuration === 'string' ? parseDuration(maxDuration) : null,
          secretFiles,
          env: {
            ...env,
            SVC_AUTH_TOKEN: token,
            SVC_AGENT_ID: agent.id,
            SVC_AGENT_NAME: agent.name,
            SVC_PROJECT_ID: agent.projectId,
            ...ports,
            ...(typeof tz === 'string' && tz ? {TZ: tz} : {}),
          },
        },
        // A clone of a large remote takes a while; a worktree or a plain start is quick. Longer
        // than the broker's own bounds (a clone 10 minutes, a re-clone 2 more to ask the remote
        // first: workspace/worktree.ts), so its answer, a start or a refusal, comes before the
        // Hub gives up on it; should it not, the broker's next liveness report stops the session.
        15 * 60_000,
      )
      const reported = a.status.pendingFor(agent.id, mark)?.activity
      await a.status.forget(agent.id)
      const activity = reported ?? firstActivity(agent, configured?.harness)
      return (await store.agents.update(agent.id, {phase: 'running', activity, runtime: res.runtime, runtimeRef: res.ref, image: res.image ?? null, sandbox: res.sandbox ?? null, error: null, lastHeartbeatAt: now(), ...(res.workspace !== undefined && {workspace: res.workspace})}, now()))!
    } catch (err) {
      // Its token must not outlive the failed start; a revocation that fails must not keep the
      // agent in `provisioning` either (the token then expires on its own).
      await a.tokens.revokeAll(agent.id).catch((e) => deps.logger.warn({agentId: agent.id, err: (e as Error).message}, 'revoking the tokens of a failed start failed'))
      const refusal = launchRefusal(err)
      const message = refusal?.message ?? (err instanceof Error ? err.message : String(err))
      deps.logger.warn({agentId: agent.id, err: message}, 'dispatch failed')
      // The project's setup or image failed: said as the broker put it (exit code, last lines).
      const projectFailure = err instanceof AppError && PROJECT_FAILURES.has(String((err.details as {brokerCode?: unknown} | undefined)?.brokerCode))
      const failed = (await store.agents.update(agent.id, {phase: 'error', error: projectFailure ? message.replace(/^broker: /, '') : `dispatch failed: ${message}`}, now()))!
      if (refusal) throw refusal
      return failed
    }
  }

  /**
   * Stops the agent's session on its broker (when reachable) and keeps its output; with
   * `removeWorkspace`, its worktree goes too, and with `deleteBranch` its branch once merged
   * (answered: what the broker did with the branch, when it was asked and reached).
   */
  async function halt(agent: AgentRecord, opts: {removeWorkspace?: boolean; deleteBranch?: boolean} = {}): Promise<DeletedBranchDto | undefined> {
    await a.status.forget(agent.id)
    await a.tokens.revokeAll(agent.id)
    if (!agent.brokerId || !a.gateway.isConnected(agent.brokerId)) return
    if (!agent.runtimeRef && !(opts.removeWorkspace && agent.workspace)) return
    const remove = opts.removeWorkspace && agent.workspace && {removeWorkspace: agent.workspace, ...(opts.deleteBranch && {deleteBranch: true})}
    const res = await a.gateway.request<{log?: string; branch?: DeletedBranchDto}>(agent.brokerId, 'agent.stop', {agentId: agent.id, ...remove}, 120_000)
    await archive(agent.id, res?.log)
    return res?.branch
  }

  return {templateFilesOf, archive, dispatch, halt, gatherSecrets, secretValuesOf}
}

/**
 * The branch an agent works on: `svc/<name>`, made a valid git ref. Agent names are letters,
 * digits, `.`, `_` and `-`, so only dots can break a ref: `..`, a trailing `.`, a `.lock` end.
 */
export function agentBranch(agentName: string): string {
  const ref = agentName.replace(/\.{2,}/g, '.').replace(/\.+$/, '').replace(/\.lock$/, '-lock')
  return `svc/${ref}`
}
