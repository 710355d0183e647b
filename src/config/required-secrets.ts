import {AppError} from '../api/app-error.js'
import type {RequiredSecret} from './settings-profile.js'

export type {RequiredSecret}

/** Where secret values may already be: `--secret KEY=VALUE` flags, then the environment. */
export interface SecretSources {
  flags?: Record<string, string>
  env?: Record<string, string | undefined>
}

/** The one prompt this needs (an `@inquirer/prompts` `password` in production; injected in tests). */
export interface SecretPrompts {
  password(config: {message: string; mask?: string | boolean; validate?: (value: string) => boolean | string}): Promise<string>
}

export interface GatherOptions {
  /** False with `cli.interactive_disabled`, `--json` or no TTY (see canPrompt). */
  canPrompt: boolean
  prompts?: SecretPrompts
}

export interface GatheredSecret {
  key: string
  type: RequiredSecret['type']
  target?: string
  value: string
  source: 'flag' | 'environment' | 'prompt'
}

/** Prompts are allowed only on a terminal, without `--json`, and without `cli.interactive_disabled`. */
export function canPrompt(o: {json: boolean; interactiveDisabled: boolean; stdinIsTTY?: boolean; stdoutIsTTY?: boolean}): boolean {
  return !o.json && !o.interactiveDisabled && !!o.stdinIsTTY && !!o.stdoutIsTTY
}

async function defaultPrompts(): Promise<SecretPrompts> {
  const {password} = await import('@inquirer/prompts')
  // Prompts go to stderr so stdout stays the command's result.
  return {password: (config) => password(config, {output: process.stderr})}
}

/**
 * Collects the values of required secrets (from a harness configuration and the active profile)
 * for agent creation. Values come from flags, then the environment (a variable named like the
 * key), then, when prompting is allowed, a masked prompt per missing secret. The values are
 * returned to the caller only: this never writes them anywhere, and they never belong in a
 * settings file. When prompting is not allowed and values are missing, fails with
 * `interactive_required` (exit 2) listing every missing key in the message and `details.missing`.
 */
export async function gatherRequiredSecrets(required: readonly RequiredSecret[], sources: SecretSources, opts: GatherOptions): Promise<GatheredSecret[]> {
  const seen = new Set<string>()
  const wanted = required.filter((s) => s && typeof s.key === 'string' && !seen.has(s.key) && seen.add(s.key))
  const out: GatheredSecret[] = []
  const missing: RequiredSecret[] = []
  for (const s of wanted) {
    const base = {key: s.key, type: s.type ?? 'environment', ...(s.target ? {target: s.target} : {})}
    const flag = sources.flags?.[s.key]
    const env = sources.env?.[s.key]
    if (flag !== undefined && flag !== '') out.push({...base, value: flag, source: 'flag'})
    else if (env !== undefined && env !== '') out.push({...base, value: env, source: 'environment'})
    else missing.push(s)
  }
  if (!missing.length) return out
  if (!opts.canPrompt) {
    const list = missing.map((s) => (s.description ? `${s.key} (${s.description})` : s.key)).join(', ')
    throw new AppError('interactive_required', `missing required secrets: ${list}; pass each with --secret KEY=VALUE or set it in the environment (prompts are off: --json, no TTY, or cli.interactive_disabled)`, {missing: missing.map((s) => s.key)})
  }
  const prompts = opts.prompts ?? (await defaultPrompts())
  for (const s of missing) {
    const value = await prompts.password({
      message: `${s.key}${s.description ? ` (${s.description})` : ''}`,
      mask: '*',
      validate: (v) => (v.length > 0 ? true : `${s.key} is required`),
    })
    out.push({key: s.key, type: s.type ?? 'environment', ...(s.target ? {target: s.target} : {}), value, source: 'prompt'})
  }
  const order = new Map(wanted.map((s, i) => [s.key, i]))
  return out.sort((a, b) => order.get(a.key)! - order.get(b.key)!)
}
