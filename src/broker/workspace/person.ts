/**
 * Who lands an agent's work: the person's own git identity, as `git config` in the project's
 * checkout resolves it (the checkout's config, then their global and system files). The
 * checkout is the person's and trusted, so this is plain git (git.ts without `untrusted`); the
 * agent's repository is never read for it (its config is the agent's to write).
 */
import {gitRaw} from './git.js'
import type {Identity} from './refusal.js'

async function configValue(checkout: string, key: string): Promise<string> {
  const r = await gitRaw(['config', '--get', key], {cwd: checkout, timeoutMs: 10_000})
  return r.code === 0 ? r.stdout.toString('utf8').trim() : ''
}

/**
 * `user.name` and `user.email` of the checkout when both are set, else `fallback` (the person's
 * Hub identity, which the Hub sends): half of one and half of the other would name nobody.
 */
export async function personIdentity(checkout: string | null, fallback: Identity): Promise<Identity> {
  if (!checkout) return fallback
  const [name, email] = await Promise.all([configValue(checkout, 'user.name'), configValue(checkout, 'user.email')])
  return name && email ? {name, email} : fallback
}
