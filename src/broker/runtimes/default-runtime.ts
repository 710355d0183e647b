/**
 * The default runtime of a broker, chosen once and kept. Detecting it at every start made the
 * default follow whatever engine happened to answer that day: installing podman moved every new
 * agent (and, before handles were resolved per agent, every running one) off `local`. Now the
 * first start detects (docker, else podman, else local), writes the answer to
 * `<stateDir>/runtime.json`, and every later start reads it back. A setting that names a
 * runtime (`server.broker.runtime` for the Hub's broker, `--runtime` for `svc broker start`)
 * wins over the stored choice without rewriting it, so removing the setting restores the
 * first-start choice.
 */
import {mkdirSync, readFileSync, renameSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

export interface StoredDefault {
  runtime: string
  chosenAt: string
  /** `detected`: the first start probed the engines; `setting`: never written from a setting. */
  how: 'detected'
}

export interface DefaultChoice {
  /** A runtime type or a name of settings `runtimes`. */
  runtime: string
  /** Where the answer came from: a setting, the stored first-start choice, or a probe just now. */
  source: 'setting' | 'stored' | 'detected'
  chosenAt?: string
}

export const DEFAULT_RUNTIME_FILE = 'runtime.json'

export function readStoredDefault(stateDir: string): StoredDefault | null {
  try {
    const v = JSON.parse(readFileSync(join(stateDir, DEFAULT_RUNTIME_FILE), 'utf8')) as StoredDefault
    return typeof v?.runtime === 'string' && v.runtime !== '' ? v : null
  } catch {
    return null
  }
}

function writeStoredDefault(stateDir: string, v: StoredDefault) {
  mkdirSync(stateDir, {recursive: true, mode: 0o700})
  const file = join(stateDir, DEFAULT_RUNTIME_FILE)
  const tmp = `${file}.${process.pid}.tmp`
  writeFileSync(tmp, JSON.stringify(v, null, 2) + '\n', {mode: 0o600})
  renameSync(tmp, file)
}

/**
 * The default runtime: `pinned` when given (a setting), else the stored first-start choice, else
 * `detect()` once, stored for every later start. An unknown pinned type is refused here so a
 * typo does not silently become a probe.
 */
export async function chooseDefaultRuntime(stateDir: string, opts: {pinned?: string; known: readonly string[]; detect: () => Promise<string>}): Promise<DefaultChoice> {
  const pinned = opts.pinned?.trim()
  if (pinned) {
    if (!opts.known.includes(pinned)) throw new Error(`the default runtime ${JSON.stringify(pinned)} is not a runtime type or a name in settings \`runtimes\` (use one of ${opts.known.join(', ')})`)
    return {runtime: pinned, source: 'setting'}
  }
  const stored = readStoredDefault(stateDir)
  if (stored) return {runtime: stored.runtime, source: 'stored', chosenAt: stored.chosenAt}
  const runtime = await opts.detect()
  const chosenAt = new Date().toISOString()
  writeStoredDefault(stateDir, {runtime, chosenAt, how: 'detected'})
  return {runtime, source: 'detected', chosenAt}
}
