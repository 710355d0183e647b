/** `svc agent create`'s budget flags (agent-limit-flags.ts) as the create body's `limits`; no oclif here. */
import {AppError} from '../api/app-error.js'
import {parseDuration} from '../domain/shared/clock.js'

/** The body's `limits` from the flags given (undefined: none). */
export function limitsFromFlags(f: {'max-turns'?: number; 'max-model-calls'?: number; 'max-duration'?: string; 'max-cost'?: string; 'max-children'?: number; 'max-depth'?: number}): Record<string, number> | undefined {
  const out: Record<string, number> = {}
  if (f['max-turns'] !== undefined) out.maxTurns = f['max-turns']
  if (f['max-model-calls'] !== undefined) out.maxModelCalls = f['max-model-calls']
  if (f['max-duration'] !== undefined) {
    const d = f['max-duration']
    const ms = /^\d+$/.test(d) ? Number(d) * 1000 : parseDuration(d)
    if (ms === null || ms < 1000) throw new AppError('usage_error', `--max-duration expects a duration of 1s or more such as 90s, 45m or 2h, not ${JSON.stringify(d)}`)
    out.maxDurationSeconds = Math.ceil(ms / 1000)
  }
  if (f['max-cost'] !== undefined) {
    const usd = Number(f['max-cost'].replace(/^\$/, ''))
    if (!Number.isFinite(usd) || usd < 0 || f['max-cost'].trim() === '') throw new AppError('usage_error', `--max-cost expects an amount of USD such as 2.50, not ${JSON.stringify(f['max-cost'])}`)
    out.maxCostUsd = usd
  }
  if (f['max-children'] !== undefined) out.maxChildren = f['max-children']
  if (f['max-depth'] !== undefined) out.maxDepth = f['max-depth']
  return Object.keys(out).length ? out : undefined
}
