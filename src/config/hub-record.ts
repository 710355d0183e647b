import {mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {svcHome} from './paths.js'

/**
 * Where a running workstation Hub records its URL, so the CLI finds a Hub started on another
 * port (`svc server start --port 9999`) with no flag or variable. Written when the Hub listens,
 * removed when it stops cleanly; a record whose process is gone (a crash, kill -9) is stale and
 * ignored. Precedence for the CLI: `--hub`, `SVC_HUB_ENDPOINT`, settings `hub.endpoint`, this
 * record, then `http://127.0.0.1:9810` (docs/cli.md).
 */
export interface HubRecord {
  url: string
  pid: number
  startedAt: string
}

export const hubRecordFile = (env: NodeJS.ProcessEnv = process.env) => join(svcHome(env), 'hub.json')

export function writeHubRecord(url: string, env: NodeJS.ProcessEnv = process.env): void {
  const file = hubRecordFile(env)
  mkdirSync(svcHome(env), {recursive: true, mode: 0o700})
  const tmp = `${file}.${process.pid}.tmp`
  writeFileSync(tmp, JSON.stringify({url, pid: process.pid, startedAt: new Date().toISOString()} satisfies HubRecord) + '\n', {mode: 0o600})
  renameSync(tmp, file)
}

/** Removes the record if this process wrote it (another Hub may have started since). */
export function removeHubRecord(env: NodeJS.ProcessEnv = process.env): void {
  const file = hubRecordFile(env)
  if (readRecord(file)?.pid !== process.pid) return
  try {
    unlinkSync(file)
  } catch {
    // already gone
  }
}

function readRecord(file: string): HubRecord | null {
  try {
    const r = JSON.parse(readFileSync(file, 'utf8')) as HubRecord
    return typeof r?.url === 'string' && Number.isInteger(r.pid) ? r : null
  } catch {
    return null
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The URL of the workstation Hub running for this HOME, or null (no record, or a stale one). */
export function recordedHubUrl(env: NodeJS.ProcessEnv = process.env): string | null {
  const r = readRecord(hubRecordFile(env))
  return r && alive(r.pid) ? r.url : null
}
