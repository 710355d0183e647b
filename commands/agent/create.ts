import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {createAgent, createdText, type AgentCreateResult} from '../../src/cli/agent-create-run.js'
import {limitFlags} from '../../src/cli/agent-limit-flags.js'

// The work is in src/cli/agent-create-run.ts, which the quick path (src/cli/quick-main.ts) runs
// too without oclif for the argv it is sure of; its flag table is tested against these flags.
export default class AgentCreate extends BaseCommand<AgentCreateResult> {
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
    return createAgent(this.ctx, args, flags)
  }

  protected override human(result: AgentCreateResult): string {
    return createdText(result)
  }
}
