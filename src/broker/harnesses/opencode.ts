import {mkdir, writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import {readJsonObject, unlinkPlantedLinks, writeJsonFile} from './json-file.js'
import {PLUGIN_FILE, pluginSource} from './opencode-plugin.js'
import {clipLine, toolDetail as detailOf} from './tool-detail.js'
import type {PermissionAsk, PermissionVerdict} from './permission-hook.js'
import type {HarnessModule, HookReport, LaunchContext, SessionUsage} from './types.js'
import {SVC_MCP_ARGS, SVC_MCP_COMMAND, SVC_MCP_NAME} from './svc-mcp.js'

/**
 * OpenCode (`opencode`, npm opencode-ai). Its interactive TUI runs in tmux; the task goes in as
 * `--prompt`, resume is `--continue`, the model `-m provider/model`. Activity comes from a plugin
 * svc writes into the agent's HOME (see opencode-plugin.ts), and so do approvals: the plugin runs
 * `svc hook opencode permission.asked` for each permission request and gives OpenCode the
 * decision the hook prints (`permissionAskOf`, `permissionReplyLine`). The config svc writes turns off
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

/** What a person judges of an OpenCode permission request: the bash command, else its patterns (paths, URLs). */
function permissionSummary(p: any): string {
  if (typeof p.metadata?.command === 'string') return p.metadata.command
  if (Array.isArray(p.patterns)) return p.patterns.filter((x: unknown) => typeof x === 'string').join(' ')
  return typeof p.pattern === 'string' ? p.pattern : typeof p.title === 'string' ? p.title : ''
}

/** An edit's metadata carries its whole diff: past this it is left out of the approval's input (the Hub takes 64 KiB). */
const METADATA_MAX = 32 * 1024

/**
 * OpenCode's `permission.asked` (`{id, sessionID, permission, patterns, metadata, always}`) as an
 * approval: the tool is OpenCode's own permission name (`bash`, `edit`, `external_directory`, ...).
 */
export function permissionAskOf(event: string, payload: unknown): PermissionAsk | null {
  if (event !== 'permission.asked') return null
  const p: any = payload && typeof payload === 'object' ? payload : {}
  const tool = typeof p.permission === 'string' && p.permission ? p.permission : 'permission'
  const meta = p.metadata && typeof p.metadata === 'object' ? p.metadata : {}
  const small = JSON.stringify(meta).length <= METADATA_MAX
  const metadata = small ? meta : Object.fromEntries(['command', 'filepath', 'filePath'].filter((k) => typeof meta[k] === 'string').map((k) => [k, meta[k]]))
  return {tool, summary: permissionSummary(p), input: {patterns: Array.isArray(p.patterns) ? p.patterns : [], metadata}}
}

/**
 * The hook's lines the plugin reads (opencode-plugin.ts): `{"pending": true}` once the Hub holds
 * the request, then the reply it gives OpenCode (`once`, or `reject` with the message the model
 * reads as the tool's error). Nothing for answered or expired: the TUI's dialog decides.
 */
export const permissionPendingLine = () => `${JSON.stringify({pending: true})}\n`
export function permissionReplyLine(v: PermissionVerdict): string {
  return `${JSON.stringify(v.behavior === 'allow' ? {reply: 'once'} : {reply: 'reject', message: v.message ?? 'Denied.'})}\n`
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
      // Reported so only when the Hub could not be asked for an approval (which reports the same).
      const what = p.permission ?? p.type ?? 'permission'
      const pattern = permissionSummary(p)
      return {activity: 'waiting_for_input', detail: clipLine(`Permission: ${pattern ? `${what}: ${pattern}` : String(what)}`)}
    }
    case 'permission.reply_failed': {
      // svc's plugin could not give OpenCode the decision (opencode-plugin.ts): its dialog still
      // asks, and the agent says why, as a harness's failure (its `error`, red on the pages).
      const what = p.permission ?? 'permission'
      const pattern = permissionSummary(p)
      const decision = p.reply === 'once' ? 'allow' : p.reply === 'reject' ? 'deny' : 'decision'
      return {
        activity: 'waiting_for_input',
        detail: clipLine(`Permission: ${pattern ? `${what}: ${pattern}` : String(what)}`),
        error: clipLine(`svc could not give OpenCode the ${decision} of its ${what} request (${String(p.error ?? 'unknown error')}); its dialog still asks`),
      }
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
  permissionAsk: permissionAskOf,
  permissionPending: permissionPendingLine,
  permissionAnswer: (_event, verdict) => permissionReplyLine(verdict),
}
