/**
 * What a broker keeps up for each running agent besides its session: the `max_duration`
 * deadline (the agent is stopped when it passes, also across a broker restart, because the
 * deadline is kept in the registry) and the agent's token, refreshed before it expires so a
 * long-running agent's hooks never go unauthenticated (the agent reads SVC_AUTH_TOKEN_FILE).
 */
import {lstatSync} from 'node:fs'
import {readHomeFile, writeHomeFile} from './harnesses/json-file.js'
import {agentHome, agentTokenFile} from './agent-launch.js'
import {hubPost} from './hub-post.js'

/** Refresh a token this old (agent tokens live 24 h and may be refreshed in their last 12 h). */
const REFRESH_AFTER_MS = 13 * 60 * 60 * 1000
const CHECK_EVERY_MS = 10 * 60 * 1000

export interface AgentLimitsOptions {
  stateDir: string
  /** The Hub URL to refresh tokens at (a function: a broker of several replicas uses the one it is connected to). */
  hubUrl: string | (() => string)
  /** Called when an agent's deadline passes: stop it and tell the Hub why. */
  onDeadline(agentId: string): void
  onError(agentId: string, message: string): void
}

export class AgentLimits {
  private readonly deadlines = new Map<string, NodeJS.Timeout>()
  private readonly tokens = new Set<string>()
  private sweeper: NodeJS.Timeout | null = null

  constructor(private readonly opts: AgentLimitsOptions) {}

  /** Starts watching an agent: its deadline (ISO time) if it has one, and its token. */
  track(agentId: string, deadline?: string) {
    this.forget(agentId)
    this.tokens.add(agentId)
    if (deadline) {
      // setTimeout holds at most ~24.8 days; longer deadlines are re-armed when that fires.
      const arm = () => {
        const left = Date.parse(deadline) - Date.now()
        const t = setTimeout(() => (Date.parse(deadline) <= Date.now() ? this.opts.onDeadline(agentId) : arm()), Math.max(0, Math.min(left, 2 ** 31 - 1)))
        t.unref()
        this.deadlines.set(agentId, t)
      }
      arm()
    }
    if (!this.sweeper) {
      this.sweeper = setInterval(() => void this.refreshTokens(), CHECK_EVERY_MS)
      this.sweeper.unref()
    }
  }

  forget(agentId: string) {
    clearTimeout(this.deadlines.get(agentId))
    this.deadlines.delete(agentId)
    this.tokens.delete(agentId)
  }

  stop() {
    for (const t of this.deadlines.values()) clearTimeout(t)
    this.deadlines.clear()
    if (this.sweeper) clearInterval(this.sweeper)
    this.sweeper = null
  }

  /** Refreshes every watched agent's token file older than REFRESH_AFTER_MS. */
  async refreshTokens(now = Date.now()): Promise<void> {
    for (const agentId of this.tokens) {
      const file = agentTokenFile(agentHome(this.opts.stateDir, agentId))
      try {
        // The running agent can write its HOME: a link planted at the token file is removed, never followed.
        const current = (await readHomeFile(file))?.trim()
        if (!current) throw new Error('its token file is missing or was replaced')
        if (now - lstatSync(file).mtimeMs < REFRESH_AFTER_MS) continue
        const fresh = await refreshToken(typeof this.opts.hubUrl === 'function' ? this.opts.hubUrl() : this.opts.hubUrl, agentId, current)
        await writeHomeFile(file, fresh + '\n')
      } catch (err) {
        this.opts.onError(agentId, `refreshing the agent's token failed: ${(err as Error).message}`)
      }
    }
  }
}

async function refreshToken(hubUrl: string, agentId: string, token: string): Promise<string> {
  const url = new URL(`/api/v1/agents/${encodeURIComponent(agentId)}/token/refresh`, hubUrl)
  const res = await hubPost(url, token, '{}', 30_000)
  if (res.status !== 200) throw new Error(`the Hub answered ${res.status}: ${res.body.slice(0, 200)}`)
  try {
    return String((JSON.parse(res.body) as {token: string}).token)
  } catch {
    throw new Error('the Hub answered something that is not a token')
  }
}
