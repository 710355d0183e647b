/**
 * What a new agent's workspace gets beyond its checkout of the branch (docs/environments.md),
 * decided once when the agent is made, before anything runs in the work tree: the settings
 * (environment-settings.ts), the copied files (copy-files.ts) and the setup to run
 * (setup.ts). The decision is kept in the agent's repository record, which only svc writes: a
 * restart with `--setup` runs what was decided then, never what the work tree says now.
 */
import {readRecord, writeRecord, type AgentRepoPaths} from './agent-repo.js'
import {copyIntoWorkspace, type CopyMethod} from './copy-files.js'
import {environmentSettings} from './environment-settings.js'
import {setupPlan, type SetupPlan} from './setup.js'

export interface EnvironmentRecord {
  copied: {method: CopyMethod | null; files: number; bytes: number; links: number; skipped: Array<{path: string; reason: string}>}
  setup: SetupPlan | null
}

/**
 * Copies the files and decides the setup of the agent's new work tree, and records both. The
 * checkout copied from is the one its record names (none for a clone: nothing is copied).
 */
export async function makeEnvironment(paths: AgentRepoPaths, hubSection: unknown): Promise<EnvironmentRecord> {
  const rec = readRecord(paths)
  if (!rec) throw new Error(`the agent's repository record ${paths.record} is missing`)
  const settings = environmentSettings(hubSection, rec.checkout)
  const copied = rec.checkout && settings.copy.length ? await copyIntoWorkspace(rec.checkout, paths.workdir, settings.copy) : {method: null, files: 0, bytes: 0, links: 0, skipped: []}
  const env: EnvironmentRecord = {copied, setup: setupPlan(paths.workdir, settings.setup, settings.setupTimeoutMs)}
  writeRecord(paths, {...rec, environment: env})
  return env
}

/** The setup recorded when the agent was made (a restart with `--setup`), or null. */
export function recordedSetup(paths: AgentRepoPaths): SetupPlan | null {
  return readRecord(paths)?.environment?.setup ?? null
}
