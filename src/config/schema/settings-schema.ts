import {BUILTIN_HARNESS_TYPES} from '../../api/harness-types.js'
import {NOTIFY_STATES} from '../../api/notify-states.js'
import {channelTargetProblem} from '../../api/webhook-targets.js'
import {SERVER_KEYS, type KeySpec} from '../schema.js'
import {any, bool, DURATION, float, int, list, map, obj, str, type LeafNode, type ObjectNode, type SchemaNode} from './types.js'

/** A node from a SERVER_KEYS descriptor: the flat table bootstrap reads stays the one source. */
function fromKeySpec(spec: KeySpec): SchemaNode {
  switch (spec.type) {
    case 'list':
      return list(spec.doc, str('An entry.'), {default: spec.default as unknown[] | undefined, acceptCsv: true})
    case 'map':
      return map(spec.doc, 'name', any('A value.'))
    default: {
      const leaf: LeafNode = {kind: spec.type, doc: spec.doc}
      if (spec.default !== undefined) leaf.default = spec.default
      if (spec.oneOf) leaf.oneOf = spec.oneOf
      return leaf
    }
  }
}

/** The `server` section: every `server.*` key of SERVER_KEYS, plus the blocks the Hub owns elsewhere. */
function serverSection(): ObjectNode {
  const root = obj('Server mode: the Hub\'s bootstrap and operational keys (see "Server keys").', {})
  for (const [key, spec] of Object.entries(SERVER_KEYS)) {
    if (!key.startsWith('server.')) continue
    const segs = key.split('.').slice(1)
    let cur = root
    for (const seg of segs.slice(0, -1)) {
      cur.fields[seg] ??= obj(`The \`${seg}\` block.`, {})
      cur = cur.fields[seg] as ObjectNode
    }
    cur.fields[segs[segs.length - 1]] = fromKeySpec(spec)
  }
  const hub = root.fields.hub as ObjectNode
  const broker = root.fields.broker as ObjectNode
  const cors = (where: string) =>
    obj(`CORS of the ${where}; a missing block means on, a block without \`enabled\` means off.`, {enabled: bool('CORS on or off.')}, {open: true, materialize: false})
  hub.fields.cors = cors('Hub API')
  broker.fields.cors = cors('co-located broker API')
  root.fields.github_app = obj('GitHub App integration (Layer-1 section `github_app`).', {webhooks_enabled: bool('Accept GitHub webhooks.')}, {open: true, materialize: false})
  root.fields.notification_channels = list(
    'Notification channels (Layer-1 section `notification_channels`): where the Hub tells people that an agent needs them or finished.',
    obj(
      'A channel.',
      {
        type: str('Channel type.', {oneOf: ['webhook']}),
        url: str('URL the Hub POSTs each event to (a Slack incoming webhook works as is).', {format: {re: /^https?:\/\/\S+$/, describe: 'an http:// or https:// URL'}}),
        events: list('Agent states that trigger a POST (activities, phases, and `harness_error`: a harness\'s API, auth or network failure); default `waiting_for_input`, `idle`, `completed`, `error`, `limits_exceeded`, `harness_error`.', str('A state.', {oneOf: NOTIFY_STATES})),
        projects: list('Only agents of these projects (IDs); default every project.', str('A project ID.')),
        secret: str('Key of the `X-Svc-Signature: sha256=<hex HMAC-SHA256 of the body>` header; no header without it.'),
        allow_private: bool('Allow a URL on a loopback, link-local or private address (`127.0.0.1`, `localhost`, `10.x`, `192.168.x`, `169.254.x`, `fc00::/7`, ...), or a name that resolves to one; refused without it, when saved and when sent.', {default: false}),
      },
      {required: ['type', 'url'], materialize: false, check: (c) => {
        const problem = channelTargetProblem(c)
        return problem ? [{key: 'url', message: problem}] : []
      }},
    ),
  )
  root.fields.federation = obj('Trust of external identity providers (Layer-1 section `federation`).', {}, {open: true, materialize: false})
  return root
}

const resourcesFields = () => ({
  cpu: str('CPU cores; may be fractional (`0.5`).', {default: '1'}),
  memory: str('Memory limit.', {default: '2Gi'}),
  disk: str('Disk limit.', {default: '10Gi'}),
  gpu: int('Number of GPUs.', {default: 0, min: 0}),
})

const requiredSecret = obj(
  'A secret the harness needs. Missing values are asked for at agent creation and never written to settings files.',
  {
    key: str('Name of the secret, and of the environment variable for `environment` and `variable` (then letters, digits and `_` only).'),
    description: str('What the secret is, shown when asking for it.'),
    type: str('How the secret reaches the agent.', {oneOf: ['environment', 'variable', 'file'], default: 'environment'}),
    target: str('Path of the file, for the `file` type.'),
  },
  {required: ['key']},
)

const envMap = (doc: string) => map(doc, 'VARIABLE', {kind: 'scalar', doc: 'Value of the variable.'})

const harnessFields = (): Record<string, SchemaNode> => ({
  harness: str('Harness type (for example `claude`, `gemini`, `codex`).'),
  image: str('Container image of the harness.'),
  user: str('User the harness runs as inside the container.'),
  model: str('Model the harness uses.'),
  task_flag: str('When set, the task is passed as the value of this flag instead of as a positional argument.'),
  args: list('Extra arguments of the harness command.', str('An argument.')),
  env: envMap('Environment of the harness.'),
  volumes: list('Volumes mounted into the agent.', any('A volume.')),
  auth_selected_type: str('Authentication method of the harness.'),
  secrets: list('Required secrets.', requiredSecret),
  resources: obj('Resources of agents using this configuration (defaults to `default_resources`).', resourcesFields(), {materialize: false}),
})

const telemetry = obj('Telemetry (global and project scope, merged key by key, later wins).', {
  enabled: {...(fromKeySpec(SERVER_KEYS['telemetry.enabled']) as LeafNode), env: 'SVC_TELEMETRY_ENABLED'},
  cloud: obj('Export to an OpenTelemetry collector.', {
    enabled: bool('Export to the cloud endpoint.', {default: true, env: 'SVC_TELEMETRY_CLOUD_ENABLED'}),
    endpoint: str('OTLP endpoint.', {env: 'SVC_OTEL_ENDPOINT'}),
    protocol: str('OTLP protocol.', {oneOf: ['grpc', 'http'], default: 'grpc', env: 'SVC_OTEL_PROTOCOL'}),
    headers: map('Headers sent with every export.', 'header', {kind: 'scalar', doc: 'Header value.'}),
    tls: obj('TLS of the export.', {
      enabled: bool('Use TLS.', {default: true}),
      insecure_skip_verify: bool('Skip certificate verification.', {default: false, env: 'SVC_OTEL_INSECURE'}),
    }),
    batch: obj('Batching of spans.', {
      max_size: int('Spans per batch.', {default: 512, min: 1}),
      timeout: str('Flush interval.', {default: '5s', format: DURATION}),
    }),
  }),
  hub: obj('Reporting to the Hub.', {
    enabled: bool('Report to the Hub (auto-enabled in hosted mode).', {default: true, env: 'SVC_TELEMETRY_HUB_ENABLED'}),
    report_interval: str('Report interval.', {default: '30s', format: DURATION}),
  }),
  local: obj('Local output.', {
    enabled: bool('Write telemetry locally.', {default: false, env: 'SVC_TELEMETRY_DEBUG'}),
    file: str('JSONL file to append to.'),
    console: bool('Write to stderr.', {default: false}),
  }),
  filter: obj('What is exported.', {
    enabled: bool('Apply the filter.', {default: true}),
    respect_debug_mode: bool('Export everything in debug mode.', {default: true}),
    events: obj('Events by type.', {
      include: list('Event types to export (empty: all).', str('An event type.'), {default: []}),
      exclude: list('Event types never exported.', str('An event type.'), {default: ['agent.user.prompt']}),
    }),
    attributes: obj('Attributes of events.', {
      redact: list('Attributes replaced by a redaction marker.', str('An attribute.'), {default: ['prompt', 'user.email', 'tool_output', 'tool_input']}),
      hash: list('Attributes replaced by their SHA-256.', str('An attribute.'), {default: ['session_id']}),
    }),
    sampling: obj('Sampling.', {
      default: float('Sampling rate of events without their own rate.', {default: 1.0, min: 0, max: 1}),
      rates: map('Sampling rate by event type.', 'event type', float('Rate.', {min: 0, max: 1})),
    }),
  }),
  resource: map('Static attributes added to every event.', 'attribute', {kind: 'scalar', doc: 'Value.'}),
})

/** The whole settings.yaml. Field order here is the order of docs and `svc config list`. */
export const SETTINGS_SCHEMA: ObjectNode = withOtherServerKeys(obj(
  'A settings file (global `~/.svc/settings.yaml` or a project\'s `.svc/settings.yaml`).',
  {
    schema_version: str('Format of the file: `"1"`.', {oneOf: ['1']}),
    active_profile: str('Profile in use (see `profiles`).', {env: 'SVC_ACTIVE_PROFILE'}),
    default_template: str('Template of new agents.', {env: 'SVC_DEFAULT_TEMPLATE'}),
    image_registry: fromKeySpec(SERVER_KEYS.image_registry),
    default_max_turns: int('Turn limit of new agents.', {min: 1}),
    default_max_model_calls: int('Model-call limit of new agents.', {min: 1}),
    default_max_duration: str('Run-time limit of new agents.', {format: DURATION}),
    default_resources: obj('Resources of new agents.', resourcesFields()),
    cli: obj('The command line.', {
      autohelp: bool('Print the command\'s usage after every error.', {default: true, env: 'SVC_CLI_AUTOHELP'}),
      interactive_disabled: bool('Never prompt: commands that would ask fail with `interactive_required`.', {default: false}),
    }),
    hub: obj('The Hub this checkout or user works with.', {
      enabled: bool('Work through a Hub.'),
      endpoint: str('Hub URL (overridable per agent).', {env: 'SVC_HUB_ENDPOINT'}),
      grove_id: str('Project (grove) of this checkout.', {env: 'SVC_HUB_GROVE_ID'}),
      local_only: bool('Force local operation.', {default: false}),
    }),
    runtimes: map('Runtimes agents can run on.', 'runtime', obj('A runtime.', {
      type: str('Kind of runtime (`local`: a tmux session on the broker\'s host, no container).', {oneOf: ['docker', 'podman', 'container', 'kubernetes', 'local']}),
      host: str('Daemon socket or TCP address (docker, podman; optional for podman).'),
      context: str('Cluster context (kubernetes).'),
      namespace: str('Namespace (kubernetes).'),
      sync: str('File sync strategy, for example `tar`.'),
      gke: bool('Cloud-specific cluster features.', {default: false}),
      env: envMap('Environment of agents on this runtime.'),
      sandbox: str('local: `bubblewrap` runs each agent in a bubblewrap sandbox; `none` runs agents unsandboxed, as the broker\'s user with its files and environment (on purpose only).', {oneOf: ['bubblewrap', 'none'], default: 'bubblewrap'}),
      nice: int('local: how far agents yield the CPU (0-19, as `nice`): under load the Hub, harness hooks and your own programs go first; 0 gives agents equal priority.', {default: 10, min: 0, max: 19}),
      env_passthrough: list('local with a sandbox: broker environment variables that reach agents (by default none does, but PATH and LANG).', str('A variable name.'), {default: []}),
      image: str('docker, podman: image of agents whose harness configuration names none (default: the base image of `svc image build`).'),
      network: str('local with a sandbox: `isolated` gives each agent its own network namespace reaching only the Hub, the model endpoints of its harness config and `egress_allow` (docs/runtimes.md); `host` shares the host\'s network, loopback included.', {oneOf: ['isolated', 'host'], default: 'isolated'}),
      user_namespace: str('local with a sandbox, broker running as root: `required` runs agents as uid 1000 in a user namespace (a host refusing user namespaces refuses the start); `off` runs them as root without capabilities.', {oneOf: ['required', 'off'], default: 'required'}),
      egress_allow: list('local with an isolated network: more `host:port` pairs agents may reach (for example `registry.npmjs.org:443`), through the proxy of their sandbox.', str('A host:port pair.'), {default: []}),
    })),
    harness_configs: map('Harness configurations.', 'config', obj(`A harness configuration. Its \`harness\` is required, except in a config named after a built-in harness (${BUILTIN_HARNESS_TYPES.map((t) => `\`${t}\``).join(', ')}), which is of that type unless it says otherwise.`, harnessFields(), {required: ['harness'], impliedByName: {field: 'harness', names: BUILTIN_HARNESS_TYPES}})),
    profiles: map('Profiles: a runtime and the defaults that go with it.', 'profile', obj('A profile.', {
      runtime: str('Runtime of the profile; must name an entry of `runtimes`.'),
      default_template: str('Template of new agents (over the top-level one).'),
      default_harness_config: str('Harness configuration of new agents.'),
      image_registry: str('Registry prefix (over the top-level one).'),
      env: envMap('Environment merged into the runtime\'s (the profile wins).'),
      harness_overrides: map('Overrides of harness configurations, keyed by configuration name.', 'config', obj('Fields replacing those of the configuration.', harnessFields(), {materialize: false})),
      secrets: list('Required secrets of every agent of this profile.', requiredSecret),
    }, {required: ['runtime']})),
    telemetry,
    // Hub-level keys (server mode): agent defaults and operational sections.
    default_harness_config: str('Harness configuration of new agents.'),
    default_timezone: str('IANA time zone sent to agent containers with no pinned zone; empty means the image default.'),
    default_model: str('Model of new agents.'),
    default_thinking_level: str('Thinking level of new agents.'),
    default_agent_role: str('Role of new agents (read-only on every Hub).', {default: 'full'}),
    default_runtime_broker: str('Broker used when the project has none and none is requested.'),
    default_cloud_identity_mode: str('Cloud identity of new agents.', {oneOf: ['Block', 'Passthrough', 'Assign']}),
    default_cloud_identity_service_account_id: str('Service account used with `Assign`.'),
    workspace_path: str('Directory of agent workspaces.'),
    auto_inject_gcloud_adc: bool('Inject cloud application-default credentials into agents.'),
    auto_expose_ports: obj('Port exposure.', {enabled: bool('Expose agent ports automatically.')}, {materialize: false}),
    workspace: obj('New agents\' workspaces (docs/environments.md). Each key is taken from the project\'s `.svc/settings.yaml`, else the global file, else the Hub\'s Layer-1 section `workspace`.', {
      copy: list('Globs relative to the checkout of files copied into each new workspace, ignored ones included (`.env`, `.env.*`, `node_modules`); links only when they point inside the checkout.', str('A glob (`*`, `?`, `[...]`, `**`).', {format: {re: /^(?!\/)(?!\.git(\/|$))(?!(.*\/)?\.\.(\/|$)).+$/, describe: 'a glob relative to the checkout (no leading `/`, no `..`, not `.git`)'}})),
      setup: str('Shell command run in each new workspace inside the agent\'s sandbox or container before its harness starts (a committed executable `.svc/setup` runs instead when the project has one).'),
      setup_timeout: str('How long the setup may run before the agent fails (default 10m).', {format: DURATION}),
    }, {materialize: false}),
    quotas: obj('Agent quotas.', {
      max_agents_per_project: int('Agents per project.', {min: 0}),
      max_agents_per_broker: int('Agents per broker.', {min: 0}),
      enforce_broker_quotas: bool('Refuse creates over `max_agents_per_broker` (usage is counted either way).', {default: true}),
    }),
    agent_secrets: obj('Secrets written by agents.', {
      user_scope_only: bool('Refuse agent-originated project-scope secret writes (403 `secret_scope_restricted`).', {default: false}),
    }),
    approvals: obj('Approvals: harnesses\' permission requests (docs/approvals.md).', {
      rules: list(
        'Rules that decide matching permission requests at once, recorded with `decidedBy: {kind: "rule", index}`; a deny rule wins over an allow rule.',
        obj('A rule.', {
          harness: str('Only agents of this harness type (`claude`, `codex`, `gemini`, `opencode`); default every harness.'),
          tool: str('The harness\'s tool name (`Bash`, `shell`, `run_shell_command`, `bash`, `Edit`, ...), or `*` for any.'),
          match: str('A glob on the request\'s summary, the whole of it (`npm test*`; `*` any characters, `?` one); default any summary.'),
          decision: str('What the rule decides.', {oneOf: ['allow', 'deny']}),
        }, {required: ['tool', 'decision'], materialize: false}),
      ),
    }, {materialize: false}),
    project_defaults: obj('Defaults of new projects.', {default_scratchpad: str('Scratchpad of new projects.')}, {materialize: false}),
    server: serverSection(),
  },
  {required: ['schema_version']},
))

/** Keys bootstrap reads outside `server` (such as `artifacts.max_file_bytes`) join the tree where they are not yet. */
function withOtherServerKeys(root: ObjectNode): ObjectNode {
  for (const [key, spec] of Object.entries(SERVER_KEYS)) {
    if (key.startsWith('server.')) continue
    const segs = key.split('.')
    let cur = root
    for (const seg of segs.slice(0, -1)) {
      cur.fields[seg] ??= obj(`The \`${seg}\` block.`, {})
      cur = cur.fields[seg] as ObjectNode
    }
    cur.fields[segs[segs.length - 1]] ??= fromKeySpec(spec)
  }
  return root
}
