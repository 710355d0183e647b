import {distance} from 'fastest-levenshtein'
import {AppError} from '../api/app-error.js'

/**
 * "Did you mean" for mistyped commands and flags, printed with the usage error instead of asked.
 *
 * Why not @oclif/plugin-not-found's hook: on a terminal it asks "Did you mean …? (Y/n)" and runs
 * the guess, and without one it drops the guess and exits 127. svc never prompts for this (agents
 * and CI have no terminal) and a usage error exits 2 (CONTRACT.md), so svc matches the way the
 * plugin does (Levenshtein distance, the fastest-levenshtein package under the plugin's
 * fast-levenshtein) and reports the guess in the error. See docs/cli.md.
 */

/** A guess is offered only this close: a couple of slips per word, never a random command. */
function closeEnough(given: string, candidate: string): boolean {
  return distance(given, candidate) <= Math.max(2, Math.ceil(candidate.length / 4))
}

/** The candidate nearest to `given`, or undefined when none is close enough. */
export function nearest(given: string, candidates: Iterable<string>): string | undefined {
  let best: {id: string; d: number} | undefined
  for (const id of candidates) {
    const d = distance(given, id)
    if (d > 0 && (!best || d < best.d) && closeEnough(given, id)) best = {id, d}
  }
  return best?.id
}

/**
 * The command or topic the words of an unknown command most likely meant, in words
 * (`agent list`). oclif joins every leading word into the ID (`svc agnet list foo` is
 * `agnet:list:foo`), so each candidate is compared with as many leading words as it has. The
 * candidate covering the most words wins (`agent list` over `agent` for `agent lsit`), then the
 * nearest. A candidate spelled exactly is no guess: it is the right topic with a wrong command
 * under it, which the `svc help <topic>` hint covers.
 */
export function suggestCommand(id: string, commandIds: Iterable<string>): string | undefined {
  const words = id.split(/[: ]/).filter(Boolean)
  const candidates = new Set<string>()
  for (const c of commandIds) {
    const parts = c.split(':')
    for (let n = 1; n <= parts.length; n++) candidates.add(parts.slice(0, n).join(':'))
  }
  let best: {id: string; n: number; d: number} | undefined
  for (const c of candidates) {
    const n = c.split(':').length
    if (n > words.length) continue
    const given = words.slice(0, n).join(':')
    const d = distance(given, c)
    if (d === 0 || !closeEnough(given, c)) continue
    if (!best || n > best.n || (n === best.n && d < best.d)) best = {id: c, n, d}
  }
  return best?.id.replace(/:/g, ' ')
}

/**
 * The flag an unknown one most likely meant (`--projcet` -> `--project`, `-W` -> `-w`), from a
 * command's flag names and single-letter aliases.
 */
export function suggestFlag(given: string, flags: Record<string, {char?: string}>): string | undefined {
  const name = given.replace(/=.*$/, '')
  const long = Object.keys(flags).map((f) => `--${f}`)
  if (name.startsWith('--')) return nearest(name, [...long, '--help'])
  const chars = Object.values(flags).flatMap((f) => (f.char ? [`-${f.char}`] : []))
  return chars.find((c) => c.toLowerCase() === name.toLowerCase() && c !== name) ?? nearest(`-${name.replace(/^-+/, '')}`, long)
}

/** The usage error for an unknown command: the guess, where to look, and both in `details`. */
export function unknownCommandError(id: string, commandIds: string[], opts: {viaHelp?: boolean} = {}): AppError {
  const words = id.split(/[: ]/).filter(Boolean)
  const guess = suggestCommand(id, commandIds)
  const topic = commandIds.some((c) => c.startsWith(`${words[0]}:`)) ? words[0] : guess?.split(' ')[0]
  const prefix = opts.viaHelp ? 'svc help ' : 'svc '
  const message = `command ${words.join(' ')} not found${guess ? `; did you mean \`${prefix}${guess}\`?` : '.'}`
  const details = {command: words.join(' '), ...(guess && {suggestion: `${opts.viaHelp ? 'help ' : ''}${guess}`})}
  return new AppError('usage_error', `${message} See \`svc help${topic ? ` ${topic}` : ''}\` for the commands.`, details)
}

/**
 * The usage error for unknown flags (oclif's NonExistentFlagsError): its message with a guess
 * per flag, and the guesses in `details.suggestions`.
 */
export function unknownFlagsError(message: string, given: string[], flags: Record<string, {char?: string}>): AppError {
  const suggestions: Record<string, string> = {}
  for (const f of given) {
    const guess = suggestFlag(f, flags)
    if (guess) suggestions[f] = guess
  }
  const hints = Object.entries(suggestions).map(([f, g]) => (given.length === 1 ? g : `${g} for ${f}`))
  return new AppError('usage_error', hints.length ? `${message}; did you mean ${hints.join(', ')}?` : message, {flags: given, suggestions})
}
