import {mkdir, writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import {readJsonObject, unlinkPlantedLinks, writeJsonFile} from './json-file.js'
import {PLUGIN_FILE, pluginSource} from './opencode-plugin.js'
import {clipLine, toolDetail as detailOf} from './tool-detail.js'
import type {HarnessModule, HookReport, LaunchContext, SessionUsage} from './types.js'
import {SVC_MCP_ARGS, SVC_MCP_COMMAND, SVC_MCP_NAME} from './svc-mcp.js'

/**
 * OpenCode (`opencode`, npm opencode-ai). Its interactive TUI runs in tmux; the task goes in as
 * `--prompt`, resume is `--continue`, the model `-m provider/model`. Activity comes from a plugin
 * svc writes into the agent's HOME (see opencode-plugin.ts). The config svc writes turns off
 * everything that would reach the network at first start besides the model (auto-update, the
 * models.dev catalogue fetch, LSP downloads, sharing); a config's env may add providers through
 * `OPENCODE_CONFIG_CONTENT` (merged over the file).
 */

/** Environment that keeps OpenCode's first start offline apart from the model endpoint. */
const QUIET_ENV: Record<string, string> = {
  OPENCODE_DISABLE_AUTOUPDATE: 'true',
  OPENCODE_DISABLE_MODELS_FETCH: 'true',
  OPENCODE_DISABLE_LSP_DOWNLOAD: 'true',
  OPENCODE_DISABLE_SHARE: 'true',
  OPENCODE_DISABLE_DEFAULT_PLUGINS: 'true',
}

/** OpenCode's per-agent `reasoningEffort` option (OpenAI-style providers); off leaves it unset. */
const EFFORT: Record<string, string> = {low: 'low', medium: 'medium', high: 'high'}

const CREDENTIALS_FILE = '.local/share/opencode/auth.json'

const configDir = (home: string) => join(home, '.config', 'opencode')

/** The keys svc owns in opencode.json; everything else OpenCode or the user wrote stays. */
export function mergeConfig(existing: Record<string, any>, ctx: Pick<LaunchContext, 'thinkingLevel'>): Record<string, any> {
  const config: Record<string, any> = {...existing, autoupdate: false, share: 'disabled'}
  // `svc mcp` as the local MCP server `svc` (OpenCode passes its environment on).
  config.mcp = {...config.mcp, [SVC_MCP_NAME]: {type: 'local', command: [SVC_MCP_COMMAND, ...SVC_MCP_ARGS], enabled: true}}
  const effort = ctx.thinkingLevel ? EFFORT[ctx.thinkingLevel] : undefined
  const agent = {...config.agent}
  const build = {...agent.build}
  if (effort) build.reasoningEffort = effort
  else delete build.reasoningEffort
  if (Object.keys(build).length > 0) agent.build = build
  else delete agent.build
  if (Object.keys(agent).length > 0) config.agent = agent
  else delete config.agent
  return config
}

/**
 * OpenCode runs `npm install @opencode-ai/plugin` in every config dir at start (its plugin
 * typings; svc's plugin needs none) unless node_modules exists and package-lock.json's root
 * lists every dependency. That install reaches the registry and slows the first start by a
 * minute or fails offline, so the lock says it is done.
 */
async function markInstalled(dir: string): Promise<void> {
  await mkdir(join(dir, 'node_modules'), {recursive: true})
  const pkgFile = join(dir, 'package.json')
  for (const f of [pkgFile, join(dir, 'package-lock.json')]) await unlinkPlantedLinks(f)
  const pkg = await readJsonObject(pkgFile)
  if (!pkg.dependencies) await writeFile(pkgFile, `${JSON.stringify({...pkg, dependencies: {}}, null, 2)}\n`)
  const lockFile = join(dir, 'package-lock.json')
  const lock = await readJsonObject(lockFile)
  const root = lock.packages?.[''] ?? {}
  const deps = {...(pkg.dependencies ?? {}), ...(root.dependencies ?? {})}
  if (!deps['@opencode-ai/plugin']) deps['@opencode-ai/plugin'] = '*'
  const next = {lockfileVersion: 3, ...lock, packages: {...lock.packages, '': {...root, dependencies: deps}}}
  await writeFile(lockFile, `${JSON.stringify(next, null, 2)}\n`)
}

/** `bash: npm test`: the tool's name, then its most telling argument. */
export function toolDetail(tool: string, args: any): string {
  const a = args && typeof args === 'object' ? args : {}
  const summary = a.command ?? a.filePath ?? a.path ?? a.pattern ?? a.url ?? a.description ?? a.prompt
  return detailOf(tool, typeof summary === 'string' ? summary : '')
}

function usageOf(raw: any): SessionUsage | undefined {
  if (!raw || typeof raw !== 'object' || typeof raw.sessionId !== 'string') return undefined
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0)
  const u: SessionUsage = {
    sessionId: raw.sessionId,
    inputTokens: num(raw.inputTokens),
    outputTokens: num(raw.outputTokens),
    cacheReadTokens: num(raw.cacheReadTokens),
    cacheWriteTokens: num(raw.cacheWriteTokens),
    modelCalls: num(raw.modelCalls),
  }
  // OpenCode says 0 for a model it has no price for: let the Hub price it then.
  if (num(raw.costUsd) > 0) u.costUsd = raw.costUsd
  if (typeof raw.model === 'string') u.model = raw.model
  return u
}

/** What OpenCode says of an error (its session.error payload's `error`), on one line. */
const errorDetail = (error: any) => clipLine(`error: ${errorMessage(error)}`)
/** The agent's `error` for it: the provider's message (`APIError`: "Unauthorized", "fetch failed"...). */
const errorMessage = (error: any) => clipLine(String(error?.data?.message ?? error?.name ?? 'unknown'))

/** A retry OpenCode waits out (`session.status` of type `retry`): `retrying: <why>, attempt <n>`. */
function retryDetail(status: any): string {
  const why = typeof status?.message === 'string' && status.message ? status.message : 'the model request failed'
  return clipLine(`retrying: ${why}${typeof status?.attempt === 'number' ? `, attempt ${status.attempt}` : ''}`)
}

export function onOpencodeHook(event: string, payload: unknown): HookReport | null {
  const p: any = payload && typeof payload === 'object' ? payload : {}
  switch (event) {
    case 'session.status': {
      const type = p.status?.type
      if (type === 'busy') return {activity: 'thinking'}
      // Still working, and why it waits: shown as such, not yet a failure.
      if (type === 'retry') return {activity: 'thinking', detail: retryDetail(p.status)}
      return null // idle comes as session.idle, with the usage totals
    }
    case 'session.idle': {
      // A turn ends here, also one that failed (OpenCode goes idle after its session.error),
      // unless the plugin says this idle repeats one (`endsTurn: false`); the error the session
      // stopped on (`lastError`) stays shown.
      const usage = usageOf(p.usage)
      const report: HookReport = {activity: 'idle', ...(p.endsTurn !== false && {turnEnded: true}), ...(p.lastError && {detail: errorDetail(p.lastError), error: errorMessage(p.lastError)})}
      return usage ? {...report, usage} : report
    }
    case 'session.error':
      // Shown at once; the turn's end is the session.idle that follows.
      return {activity: 'idle', detail: errorDetail(p.error), error: errorMessage(p.error)}
    case 'tool.execute.before':
      return {activity: 'executing', detail: toolDetail(String(p.tool ?? 'tool'), p.args)}
    case 'permission.replied':
      // Approved: the tool asked about runs now (its call came before the ask).
      if (p.reply !== 'reject' && p.lastTool?.tool) return {activity: 'executing', detail: toolDetail(String(p.lastTool.tool), p.lastTool.args)}
      return {activity: 'thinking'}
    case 'tool.execute.after':
    case 'question.replied':
    case 'question.rejected':
      return {activity: 'thinking'}
    case 'permission.asked':
    case 'permission.updated': {
      const what = p.permission ?? p.type ?? 'permission'
      const pattern = typeof p.metadata?.command === 'string' ? p.metadata.command : Array.isArray(p.patterns) ? p.patterns.join(' ') : (p.pattern ?? p.title ?? '')
      return {activity: 'waiting_for_input', detail: clipLine(pattern ? `${what}: ${pattern}` : String(what))}
    }
    case 'question.asked':
      return {activity: 'waiting_for_input', detail: clipLine(`question: ${p.questions?.[0]?.question ?? ''}`.trim())}
    default:
      return null
  }
}

export const opencode: HarnessModule = {
  type: 'opencode',
  displayName: 'OpenCode',
  executable: 'opencode',
  install: 'npm install -g opencode-ai',
  auth: {
    default: 'api-key',
    types: {
      'api-key': {secrets: ['ANTHROPIC_API_KEY'], description: 'an Anthropic API key (models anthropic/...)'},
      'openai-api-key': {secrets: ['OPENAI_API_KEY'], description: 'an OpenAI API key (models openai/...)'},
      'credentials-file': {secrets: [], credentialsFile: CREDENTIALS_FILE, signIn: '`opencode auth login`', description: "the user's own `opencode auth login` credentials"},
      // A provider of the harness config's own (OPENCODE_CONFIG_CONTENT) that takes no key, such
      // as a model server on the local network, or whose key that config's env already holds.
      none: {secrets: [], description: 'no key: the provider set in the harness config needs none'},
    },
  },
  taskInArgs: true,
  args(ctx) {
    const args: string[] = []
    if (ctx.model) args.push('-m', ctx.model)
    if (ctx.resume) args.push('--continue')
    else if (ctx.task) args.push('--prompt', ctx.task)
    return args
  },
  env: () => ({...QUIET_ENV}),
  async prepare(ctx) {
    const dir = configDir(ctx.home)
    await mkdir(join(dir, 'plugin'), {recursive: true})
    const file = join(dir, 'opencode.json')
    await writeJsonFile(file, mergeConfig(await readJsonObject(file), ctx), 0o644)
    await unlinkPlantedLinks(join(dir, 'plugin', PLUGIN_FILE))
    await writeFile(join(dir, 'plugin', PLUGIN_FILE), pluginSource(ctx.hookCommand))
    await markInstalled(dir)
  },
  onHook: onOpencodeHook,
}
