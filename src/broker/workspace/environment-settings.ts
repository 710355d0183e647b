/**
 * The `workspace` settings of a new agent (docs/environments.md): `copy` (globs), `setup` (a
 * shell command) and `setup_timeout`, each from the most specific place that sets it: the
 * project's `<checkout>/.svc/settings.yaml`, else this machine's global settings file, else the
 * Hub's Layer-1 section `workspace` (sent with `agent.start`). Read by the broker when the agent
 * is made; what it decides is recorded with the agent's repository (agent-repo.ts), never read
 * again from files the agent can write. A file that cannot be read or has a wrong type is a
 * refusal that names it, before anything is made.
 */
import {statSync} from 'node:fs'
import {join} from 'node:path'
import {paths} from '../../config/paths.js'
import {loadYamlFile} from '../../config/yaml-file.js'
import {parseDuration} from '../../domain/shared/clock.js'
import {copyGlobProblem} from './copy-files.js'
import {WorkspaceRefusal} from './refusal.js'

export const DEFAULT_SETUP_TIMEOUT = '10m'

/** The section as the settings files and the Hub hold it. */
export interface WorkspaceSettings {
  copy?: string[]
  setup?: string
  setup_timeout?: string
}

export interface EnvironmentSettings {
  copy: string[]
  /** The shell command of `workspace.setup`, or null (a committed `.svc/setup` may still run). */
  setup: string | null
  setupTimeoutMs: number
}

/** The section's keys that are set and of the right type; a wrong one is a refusal naming `where`. */
export function workspaceSection(value: unknown, where: string): WorkspaceSettings {
  if (value === undefined || value === null) return {}
  const bad = (key: string, what: string) => new WorkspaceRefusal('workspace_failed', `${where}: workspace.${key} ${what}`)
  if (typeof value !== 'object' || Array.isArray(value)) throw new WorkspaceRefusal('workspace_failed', `${where}: workspace must be a mapping`)
  const v = value as Record<string, unknown>
  const out: WorkspaceSettings = {}
  if (v.copy !== undefined && v.copy !== null) {
    if (!Array.isArray(v.copy) || v.copy.some((g) => typeof g !== 'string')) throw bad('copy', 'must be a list of globs')
    for (const g of v.copy as string[]) {
      const problem = copyGlobProblem(g)
      if (problem) throw bad('copy', `entry ${JSON.stringify(g)} ${problem}`)
    }
    out.copy = v.copy as string[]
  }
  if (v.setup !== undefined && v.setup !== null) {
    if (typeof v.setup !== 'string') throw bad('setup', 'must be a shell command (a string)')
    out.setup = v.setup
  }
  if (v.setup_timeout !== undefined && v.setup_timeout !== null) {
    if (typeof v.setup_timeout !== 'string' || !parseDuration(v.setup_timeout)) throw bad('setup_timeout', 'must be a duration such as 10m or 90s')
    out.setup_timeout = v.setup_timeout
  }
  return out
}

/**
 * Each file's section as last parsed, with the file's identity then (device, inode, size, change
 * and modification times, ns): every agent's start reads the same one or two files, and parsing
 * them (YAML) is a few ms of the Hub's event loop on the start's path. A file written, replaced,
 * made unreadable or removed since has another identity and is read again.
 */
const parsed = new Map<string, {id: string; section: WorkspaceSettings}>()

function fileIdentity(file: string): string | null {
  try {
    const st = statSync(file, {bigint: true, throwIfNoEntry: false})
    return st ? `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}:${st.mode}` : null
  } catch {
    // Not even its place can be looked at: reading it says why.
    return null
  }
}

function fileSection(file: string): WorkspaceSettings {
  const id = fileIdentity(file)
  const known = parsed.get(file)
  if (id && known?.id === id) return known.section
  const section = readFileSection(file)
  if (id) parsed.set(file, {id, section})
  else parsed.delete(file)
  return section
}

function readFileSection(file: string): WorkspaceSettings {
  let loaded
  try {
    loaded = loadYamlFile(file)
  } catch (err) {
    throw new WorkspaceRefusal('workspace_failed', `the settings file ${file} cannot be read: ${(err as Error).message}`)
  }
  return workspaceSection(loaded?.data.workspace, file)
}

/**
 * The effective settings of a new agent: key by key, the checkout's file over the global file
 * over the Hub's section. `checkout` is the project's checkout on this machine (none for a clone).
 */
export function environmentSettings(hub: unknown, checkout: string | null, env: NodeJS.ProcessEnv = process.env): EnvironmentSettings {
  const layers = [checkout ? fileSection(join(checkout, '.svc', 'settings.yaml')) : {}, fileSection(paths(env).globalSettings), workspaceSection(hub, 'the Hub\'s settings')]
  const pick = <K extends keyof WorkspaceSettings>(k: K) => layers.find((l) => l[k] !== undefined)?.[k]
  const setup = pick('setup')?.trim()
  return {
    // A copy: the parsed sections are kept for the next start.
    copy: [...(pick('copy') ?? [])],
    setup: setup ? setup : null,
    setupTimeoutMs: parseDuration(pick('setup_timeout') ?? DEFAULT_SETUP_TIMEOUT)!,
  }
}
