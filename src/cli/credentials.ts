import {chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync} from 'node:fs'
import {dirname} from 'node:path'
import {agentToken} from '../broker/hub-post.js'
import {paths} from '../config/paths.js'

export interface StoredSession {
  token: string
  expiresAt: string
  email?: string
}

type CredentialFile = {sessions?: Record<string, StoredSession>}

const key = (endpoint: string) => new URL(endpoint).origin

function readFile(env: NodeJS.ProcessEnv): CredentialFile {
  try {
    return JSON.parse(readFileSync(paths(env).credentials, 'utf8')) as CredentialFile
  } catch {
    return {}
  }
}

/** Session credentials from `svc auth login`, per Hub origin, in ~/.svc/credentials.json (0600). */
export function storedSession(endpoint: string, env: NodeJS.ProcessEnv = process.env): StoredSession | null {
  const s = readFile(env).sessions?.[key(endpoint)]
  return s && Date.parse(s.expiresAt) > Date.now() ? s : null
}

export function saveSession(endpoint: string, session: StoredSession | null, env: NodeJS.ProcessEnv = process.env): void {
  const file = paths(env).credentials
  const data = readFile(env)
  data.sessions = {...data.sessions}
  if (session) data.sessions[key(endpoint)] = session
  else delete data.sessions[key(endpoint)]
  mkdirSync(dirname(file), {recursive: true, mode: 0o700})
  const tmp = `${file}.${process.pid}.tmp`
  writeFileSync(tmp, JSON.stringify(data, null, 2) + '\n', {mode: 0o600})
  renameSync(tmp, file)
  chmodSync(file, 0o600)
}

/** The dev credential: `SVC_DEV_TOKEN`, then `SVC_DEV_TOKEN_FILE`, then ~/.svc/dev-token. */
export function devToken(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.SVC_DEV_TOKEN) return env.SVC_DEV_TOKEN.trim()
  for (const file of [env.SVC_DEV_TOKEN_FILE, paths(env).devToken]) {
    if (!file) continue
    try {
      const t = readFileSync(file, 'utf8').trim()
      if (t) return t
    } catch {
      // absent: try the next place
    }
  }
  return null
}

/**
 * The credential the CLI presents: an agent's token (`SVC_AUTH_TOKEN_FILE`, `SVC_AUTH_TOKEN`, or
 * any bearer a script sets there), then the session stored by `svc auth login` for this Hub, then
 * the dev credential.
 */
export function credentialFor(endpoint: string, env: NodeJS.ProcessEnv = process.env): {token: string; source: string} | null {
  const agent = agentToken(env)
  if (agent) return {token: agent, source: 'SVC_AUTH_TOKEN'}
  const s = storedSession(endpoint, env)
  if (s) return {token: s.token, source: 'session'}
  const dev = devToken(env)
  if (dev) return {token: dev, source: 'dev'}
  return null
}
