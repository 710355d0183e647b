import type {FastifyInstance} from 'fastify'
import {createAccessTokens, type AccessTokens} from './auth/access-tokens.js'
import {createCredentialResolver, type Authenticate} from './auth/credentials.js'
import {createSessions, type Sessions} from './auth/sessions.js'
import {createSignIn, type SignIn} from './auth/sign-in.js'
import type {Deps} from './deps.js'
import {createAgentAccess} from './agents/access.js'
import type {AgentSettingsSource} from './agents/agent-settings.js'
import {createAgentTokens, type AgentTokens} from './agents/agent-tokens.js'
import {createHookReports, type HookReports} from './agents/hook-reports.js'
import {createAgentsService, type AgentsService} from './agents/agents-service.js'
import {createStatusWriter} from './agents/status-writer.js'
import {projectUsage} from './agents/usage.js'
import {createAgentFeed, type AgentFeed} from './events/agent-feed.js'
import {createEventsService, type EventsService} from './events/events-service.js'
import {createTeamsService, type TeamsService} from './teams/tree.js'
import {createApprovalsService, SETTLED_BY, type ApprovalsService} from './approvals/approvals-service.js'
import {rulesOf} from './approvals/rules.js'
import {agentView} from './agents/agent-state.js'
import {createReviewService, type ReviewService} from './agents/review-service.js'
import {createBrokersService, type BrokersService} from './brokers/brokers-service.js'
import type {BrokerGateway} from './brokers/gateway.js'
import {createTemplatesService, type TemplatesService} from './templates/templates-service.js'
import {createKeysService, type KeysService} from './keys/keys-service.js'
import {createMessagesService, type MessagesService} from './messages/messages-service.js'
import {createProjectSettingsService, type ProjectSettingsService} from './project-settings/project-settings-service.js'
import {createProjectsService, type ProjectsService} from './projects/projects-service.js'
import {createUsersService, type UsersService} from './users/users-service.js'
import {createPortsService, type PortsService} from './ports/ports-service.js'
import type {SettingsService} from './settings/settings-service.js'

/** Every domain service of one Hub, built once in the composition root. */
export interface Services {
  authenticate: Authenticate
  users: UsersService
  projects: ProjectsService
  accessTokens: AccessTokens
  sessions: Sessions
  /** Interactive sign-in with OpenID Connect (web, CLI loopback, device). */
  signIn: SignIn
  brokers: BrokersService
  agents: AgentsService
  agentTokens: AgentTokens
  /** Reports of harnesses' HTTP hooks (Claude Code's tool calls). */
  hookReports: HookReports
  /** Diff, merge and push of agents' work (on their brokers). */
  review: ReviewService
  teams: TeamsService
  /** Harnesses' permission requests: held, decided, waited on (approvals/approvals-service.ts). */
  approvals: ApprovalsService
  /** Agents' ports: listing, previews and forwards through the broker's tunnel (ports/ports-service.ts). */
  ports: PortsService
  templates: TemplatesService
  messages: MessagesService
  projectSettings: ProjectSettingsService
  keys: KeysService
  /** This replica's reader of the agent event log (start it once the store is migrated). */
  agentFeed: AgentFeed
  /** `GET /api/v1/events`. */
  events: EventsService
  /** Hub settings (Layer-1 sections, maintenance); absent in hand-built test service sets. */
  settings?: SettingsService
  /** Names the Hub's own co-located broker once it has an identity. */
  setColocatedBroker(id: string | null): void
  /** The co-located broker's start-up, settled once it is connected: creates meanwhile wait for it. */
  setColocatedStarting(p: Promise<unknown> | null): void
  ping: () => Promise<void>
  /** Flushes pending writes (status reports); call before closing the store. */
  close(): Promise<void>
  /** Route sets that capabilities add (sign-in, agents, ...), registered after the core ones. */
  routePlugins: Array<(app: FastifyInstance) => Promise<void> | void>
}

export interface ServiceOptions {
  /**
   * How the domain reaches brokers, the one seam for requests, streams and agents' port byte
   * streams alike: this process's tunnels, else the replica holding the broker (replicas.ts).
   */
  gateway: BrokerGateway
  agentSettings: AgentSettingsSource
  settings?: SettingsService
  /** The Hub's secrets key (sealing.ts), loaded on first use: broker secrets are sealed with it. */
  secretsKey: () => Buffer
}

export function createServices(deps: Deps, opts: ServiceOptions): Services {
  const users = createUsersService(deps)
  const sessions = createSessions(deps)
  const agentTokens = createAgentTokens(deps)
  const status = createStatusWriter(deps, {
    // A report that the harness went on settles the approvals the agent answered at its terminal,
    // before the reports are answered (approvals-service.ts).
    settleApprovals: {activities: SETTLED_BY, settle: (agentId) => approvals.settle(agentId)},
  })
  const access = createAgentAccess(deps)
  let colocatedBrokerId: string | null = null
  let colocatedStarting: Promise<unknown> | null = null
  const projects = createProjectsService(deps, [
    async (projectId) => ({agents: await agents.countInProject(projectId)}),
    // Artifacts homed in the project (those of a deleted project stay, counted nowhere).
    async (projectId) => ({artifacts: await deps.store.artifacts.countByProject(projectId)}),
    // Tokens, model calls and cost of the project's agents, deleted ones included.
    async (projectId) => projectUsage(deps.store, projectId),
  ])
  const agentFeed = createAgentFeed(deps)
  const approvals = createApprovalsService(deps, {
    access,
    status,
    rules: () => rulesOf(opts.settings?.resolved()),
    harnessOf: async (agent) => (await opts.agentSettings()).harnessConfigs[agent.harnessConfig]?.harness ?? agent.harnessConfig,
  })
  const agents = createAgentsService(deps, {access, tokens: agentTokens, status, gateway: opts.gateway, settings: opts.agentSettings, colocatedBrokerId: () => colocatedBrokerId, colocatedStarting: () => colocatedStarting})
  return {
    authenticate: createCredentialResolver(deps, [(secret) => agentTokens.resolve(secret)]),
    users,
    projects,
    projectSettings: createProjectSettingsService(deps, projects, async () => (await opts.agentSettings()).defaults),
    brokers: createBrokersService(deps, (id) => opts.gateway.isConnected(id), opts.secretsKey),
    agents,
    agentTokens,
    hookReports: createHookReports(deps, agents),
    review: createReviewService(deps, {access, gateway: opts.gateway}),
    approvals,
    ports: createPortsService(deps, {access, gateway: opts.gateway, settings: opts.agentSettings, previewKey: opts.secretsKey}),
    teams: createTeamsService(deps, {access, view: (r) => agentView(r, status.pendingFor(r.id), deps.clock.now().getTime())}),
    templates: createTemplatesService(deps, access),
    messages: createMessagesService(deps, {access, gateway: opts.gateway, settings: opts.agentSettings}),
    keys: createKeysService(deps, {access, gateway: opts.gateway}),
    agentFeed,
    events: createEventsService(deps, {feed: agentFeed, access}),
    settings: opts.settings,
    setColocatedBroker: (id) => (colocatedBrokerId = id),
    setColocatedStarting: (p) => (colocatedStarting = p),
    close: async () => {
      approvals.close()
      agentTokens.close()
      await status.close()
      await agentFeed.close()
    },
    accessTokens: createAccessTokens(deps),
    sessions,
    signIn: createSignIn(deps, {users, sessions}),
    ping: () => deps.store.ping(),
    routePlugins: [],
  }
}
