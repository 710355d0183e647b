import {Args, Flags} from '@oclif/core'
import {AppError} from '../../src/api/app-error.js'
import {BaseCommand} from '../../src/cli/base-command.js'
import {projectOrDefault} from '../../src/cli/project-ref.js'
import {agentsApi, type Agent} from '../../src/client/agents-client.js'
import {agentFields} from '../../src/cli/agent-render.js'
import {limitFlags, limitsFromFlags} from '../../src/cli/agent-limit-flags.js'

/** `KEY=VALUE` pairs of --secret. */
function secretFlags(values: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const v of values ?? []) {
    const eq = v.indexOf('=')
    if (eq < 1) throw new AppError('usage_error', `--secret expects KEY=VALUE, not ${JSON.stringify(v.replace(/=.*$/, '=...'))}`)
    out[v.slice(0, eq)] = v.slice(eq + 1)
  }
  return out
}

export default class AgentCreate extends BaseCommand<{agent: Agent} | {group: string; agents: Agent[]}> {
  static override description = `Create an agent and dispatch it to a runtime broker.

The harness (--harness: shell, claude, codex, gemini, opencode or a config of the settings) runs in the agent's own git repository, made from the project's checkout (or, where the broker has none, cloned from its remote), on the branch svc/<name>, with TASK as its first prompt. The checkout gets svc/<name> when the agent is merged, pushed or deleted.

The project is --project, else SVC_HUB_GROVE_ID, else hub.grove_id in .svc/settings.yaml, else the workstation's "default" project. The broker is --broker, else the project's default broker, else the Hub's default (its co-located broker on a workstation).

Secrets the harness needs (an API key) come from the project's secrets or your own; missing ones are asked for on a terminal and stored as your user-scope secrets of the project (--secret KEY=VALUE does the same without a prompt). An agent that does not start exits 1 (agent_failed).

The --max-* flags are the budget of the agent and every agent it leads (its children, theirs, ...): their turns, model calls, run time and cost count together; a child never gets more than its parent has left (docs/teams.md, "Budgets").`
  static override examples = [
    '<%= config.bin %> agent create fix --harness claude "fix the failing test"',
    '<%= config.bin %> agent create demo --harness shell',
    '<%= config.bin %> agent create fixer --harness codex --task "fix the failing test" --project acme',
    '<%= config.bin %> agent create fix --attempts 3 --harness claude,codex --check "npm test" "fix the failing test"',
  ]
  static override args = {
    name: Args.string({description: 'Name of the agent, unique in its project.', required: true}),
    task: Args.string({description: 'Task: the harness\'s first prompt (or use --task).'}),
  }
  static override flags = {
    harness: Flags.string({description: 'Harness config (built-in: shell, claude, codex, gemini, opencode). With --attempts, a comma-separated list taken in turn.'}),
    project: Flags.string({description: 'Project ID or slug.'}),
    template: Flags.string({description: 'Template ID or name.'}),
    task: Flags.string({description: 'Task given to the harness.'}),
    broker: Flags.string({description: 'Broker ID to run on.'}),
    runtime: Flags.string({description: 'Runtime to run on: local (tmux on the broker\'s host, sandboxed), podman, docker, or a name of the settings `runtimes` (default: the broker\'s default runtime). Kept by restarts.'}),
    role: Flags.string({description: 'Agent role.', options: ['readonly', 'baseline', 'full', 'none']}),
    attempts: Flags.integer({description: 'Run the task N times side by side: agents NAME-1 ... NAME-N in group NAME (compare them with svc agent compare NAME, keep one with svc agent pick).', min: 1, max: 20}),
    check: Flags.string({description: 'With --attempts: a command run in each attempt\'s sandbox, in its work tree, whenever it goes idle (exit 0: passed).'}),
    parent: Flags.string({description: 'Put the agent under this agent (name or ID): its branch starts from the parent\'s and lands there. Inside an agent, new agents are its children anyway.'}),
    ...limitFlags,
    secret: Flags.string({description: 'KEY=VALUE: store a secret the harness needs as your own secret of the project first.', multiple: true}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute() {
    const {args, flags} = await this.parse(AgentCreate)
    if (args.task !== undefined && flags.task !== undefined) throw new AppError('usage_error', 'give the task once: as the second argument or with --task')
    const projectId = projectOrDefault(flags.project, await this.settings())
    const api = agentsApi(await this.client(flags.hub))
    for (const [key, value] of Object.entries(secretFlags(flags.secret))) await api.putSecret(projectId, key, value, 'user')
    // Attempts: `--harness a,b` is taken in turn (harnessConfigs); the answer lists every attempt.
    const harnesses = flags.attempts !== undefined && flags.harness?.includes(',') ? {harnessConfigs: flags.harness.split(',').map((h) => h.trim())} : {harnessConfig: flags.harness}
    const body = {name: args.name, projectId, ...harnesses, attempts: flags.attempts, check: flags.check, template: flags.template, task: args.task ?? flags.task, brokerId: flags.broker, role: flags.role, runtime: flags.runtime, parentId: flags.parent, limits: limitsFromFlags(flags)}
    let result: {agent: Agent} | {group: string; agents: Agent[]}
    try {
      result = await api.create(body)
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'missing_secrets') || !(await this.canPrompt())) throw err
      // The spec's "gathered interactively at agent creation": ask, store as the user's own, retry once.
      const missing = ((err.details?.missing as Array<{key: string; description: string}> | undefined) ?? []).map((m) => ({key: m.key, description: m.description, type: 'environment' as const}))
      const {gatherRequiredSecrets} = await import('../../src/config/required-secrets.js')
      process.stderr.write(`${err.message}\n`)
      for (const s of await gatherRequiredSecrets(missing, {}, {canPrompt: true})) await api.putSecret(projectId, s.key, s.value, 'user')
      result = await api.create(body)
    }
    const failed = ('agents' in result ? result.agents : [result.agent]).find((a) => a.phase === 'error')
    if (failed) throw new AppError('agent_failed', `agent ${failed.name} was created but did not start: ${failed.error ?? 'unknown reason'}`, 'agent' in result ? {agent: failed} : {agent: failed, agents: result.agents})
    return result
  }

  protected override human(result: {agent: Agent} | {group: string; agents: Agent[]}): string {
    if ('agents' in result) return result.agents.map((a) => `Agent ${a.name} is ${a.phase}.`).join('\n') + `\nCompare them with: svc agent compare ${result.group}`
    return `Agent ${result.agent.name} is ${result.agent.phase}.\n${agentFields(result.agent)}`
  }
}
