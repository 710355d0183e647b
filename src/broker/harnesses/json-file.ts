/**
 * The JSON files harnesses keep in the agent's HOME (`~/.claude.json`, `~/.gemini/settings.json`,
 * `opencode.json`, ...): read as an object whatever is there, written whole or not at all, so a
 * harness of a previous run still reading one never sees half of it.
 */
import {randomBytes} from 'node:crypto'
import {constants} from 'node:fs'
import {lstat, mkdir, open, rename, unlink, writeFile} from 'node:fs/promises'
import {basename, dirname} from 'node:path'

/**
 * The agent can write its HOME: a file or directory there may be a link it planted to the host's
 * files (`~/.claude.json` -> the Hub's dev token), and the broker reads and writes these files
 * as its own user while the agent is stopped (a start, a restart). Before the broker touches
 * `path`, every link on the way from the agent's HOME (`<state>/homes/<id>`, or the file's own
 * directory when no such ancestor exists) down to it is removed: the link is the agent's, the
 * file it points at is not read, copied or written.
 */
export async function unlinkPlantedLinks(path: string): Promise<void> {
  const chain = [path]
  let inHome = false
  for (let d = dirname(path); d !== dirname(d); d = dirname(d)) {
    if (basename(dirname(d)) === 'homes') {
      inHome = true
      break
    }
    chain.push(d)
  }
  // Outside a broker's `homes/` (a HOME given otherwise): the file and its directory only.
  const steps = inHome ? chain.reverse() : [dirname(path), path]
  for (const p of steps) {
    const st = await lstat(p).catch(() => null)
    if (st?.isSymbolicLink()) await unlink(p)
  }
}

/** Config files of a HOME are small; a bigger one is not read (the broker's memory is not the agent's). */
const READ_MAX_BYTES = 32 * 1024 * 1024

/**
 * A regular file of the agent's HOME as text, or null: never through a link, never a FIFO (its
 * read would hold a thread of the broker for good) or a device, at most READ_MAX_BYTES.
 */
export async function readRegularFile(path: string): Promise<string | null> {
  const fh = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => null)
  if (!fh) return null
  try {
    const st = await fh.stat()
    if (!st.isFile() || st.size > READ_MAX_BYTES) return null
    return await fh.readFile('utf8')
  } catch {
    return null
  } finally {
    await fh.close()
  }
}

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * The file's object; `{}` when it is missing (first run). A file that is not a JSON object
 * (hand-edited with comments, say) is kept beside it as `<file>.svc-unreadable` and read as `{}`,
 * so the agent still starts.
 */
export async function readJsonObject(path: string): Promise<Record<string, any>> {
  await unlinkPlantedLinks(path)
  const text = await readRegularFile(path)
  if (text === null) return {}
  try {
    const parsed = JSON.parse(text)
    if (isObject(parsed)) return parsed
  } catch {
    // fall through: keep a copy and start over
  }
  // The copy is a new file: a link the agent planted at that name is removed, never written through.
  const kept = `${path}.svc-unreadable`
  await unlink(kept).catch(() => {})
  await writeFile(kept, text, {mode: 0o600, flag: 'wx'}).catch(() => {})
  return {}
}

/** Writes `value` as pretty JSON through a temp file and a rename (mode 0600 by default). */
export async function writeJsonFile(path: string, value: unknown, mode = 0o600): Promise<void> {
  await unlinkPlantedLinks(path)
  await mkdir(dirname(path), {recursive: true})
  // A new file of an unguessable name: a link planted at a predictable one would be written through.
  const tmp = `${path}.svc-${process.pid}-${randomBytes(6).toString('hex')}.tmp`
  await writeFile(tmp, `${JSON.stringify(value, null, 2)}\n`, {mode, flag: 'wx'})
  await rename(tmp, path)
}

/** Reads a file of the agent's HOME without following a link planted there (null: absent or a link). */
export async function readHomeFile(path: string): Promise<string | null> {
  await unlinkPlantedLinks(path)
  try {
    const fh = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
    try {
      return await fh.readFile('utf8')
    } finally {
      await fh.close()
    }
  } catch {
    return null
  }
}

/** Writes a file of the agent's HOME (a token, a secret file): links on the way removed, the file opened O_NOFOLLOW. */
export async function writeHomeFile(path: string, content: string, mode = 0o600): Promise<void> {
  await unlinkPlantedLinks(path)
  await mkdir(dirname(path), {recursive: true, mode: 0o700})
  await unlinkPlantedLinks(path)
  // O_NONBLOCK: a FIFO planted here (no reader) fails at once instead of holding a thread of the broker.
  const fh = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW | constants.O_NONBLOCK, mode)
  try {
    await fh.writeFile(content)
  } finally {
    await fh.close()
  }
}
