/**
 * The JSON files harnesses keep in the agent's HOME (`~/.claude.json`, `~/.gemini/settings.json`,
 * `opencode.json`, ...): read as an object whatever is there, written whole or not at all, so a
 * harness of a previous run still reading one never sees half of it.
 */
import {copyFile, mkdir, readFile, rename, writeFile} from 'node:fs/promises'
import {dirname} from 'node:path'

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * The file's object; `{}` when it is missing (first run). A file that is not a JSON object
 * (hand-edited with comments, say) is kept beside it as `<file>.svc-unreadable` and read as `{}`,
 * so the agent still starts.
 */
export async function readJsonObject(path: string): Promise<Record<string, any>> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch {
    return {}
  }
  try {
    const parsed = JSON.parse(text)
    if (isObject(parsed)) return parsed
  } catch {
    // fall through: keep a copy and start over
  }
  await copyFile(path, `${path}.svc-unreadable`).catch(() => {})
  return {}
}

/** Writes `value` as pretty JSON through a temp file and a rename (mode 0600 by default). */
export async function writeJsonFile(path: string, value: unknown, mode = 0o600): Promise<void> {
  await mkdir(dirname(path), {recursive: true})
  const tmp = `${path}.svc-${process.pid}.tmp`
  await writeFile(tmp, `${JSON.stringify(value, null, 2)}\n`, {mode})
  await rename(tmp, path)
}
