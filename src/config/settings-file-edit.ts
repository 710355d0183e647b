/**
 * Settings files on disk: edits applied under the file's cross-process lock and written
 * atomically. The text editing itself is settings-editor.ts.
 */
import {mkdirSync, readFileSync, realpathSync} from 'node:fs'
import {basename, dirname, join, resolve} from 'node:path'
import {AppError} from '../api/app-error.js'
import {writeFileAtomic} from './atomic-write.js'
import {withFileLock, type LockOptions} from './file-lock.js'
import {parseDocument} from 'yaml'
import {editSettingsText, type SettingsEdit} from './settings-editor.js'
import {yamlToJS} from './yaml-aliases.js'

export interface EditResult {
  /** The file that was (or would have been) written: the real path behind any symlink. */
  file: string
  /** False when the edits changed nothing (the file is then not written). */
  changed: boolean
  /** True when the file did not exist and was created. */
  created: boolean
  text: string
}

export interface EditOptions {
  /** Text of a file that does not exist yet (default `schema_version: "1"`); null refuses to create. */
  initialText?: string | null
  /** Called with the new text before it is written; throw to abort (nothing is written). */
  check?: (text: string, before: string | null) => void
  /** Mode of a new file (default 0644). */
  mode?: number
}

/** The real path of a settings file (symlinks resolved, so every name shares one lock). */
function realTarget(file: string): string {
  try {
    return realpathSync(file)
  } catch {
    const dir = dirname(resolve(file))
    mkdirSync(dir, {recursive: true})
    return join(realpathSync(dir), basename(file))
  }
}

/**
 * Runs `fn` holding the settings-file lock of `file` (one cross-process lock per file; re-entrant
 * in one async call chain). The Hub's admin API holds it across its database and file writes.
 */
export function withSettingsLock<T>(file: string, fn: () => T | Promise<T>, opts: LockOptions = {}): Promise<T> {
  return withFileLock(realTarget(file), fn, opts)
}

/**
 * Applies edits to a settings file under its lock and writes it atomically (temp file, fsync,
 * rename, directory fsync). A missing file is created with `schema_version: "1"`; nothing is
 * written when the edits change nothing. `edits` may be a function of the file's data as read
 * under the lock (a merge computes its edits from what is there, so nothing read earlier goes
 * stale). Errors as editSettingsText, plus 409 `conflict` when the lock cannot be had in time.
 */
export async function editSettingsFile(file: string, edits: readonly SettingsEdit[] | ((data: unknown) => SettingsEdit[]), opts: EditOptions = {}): Promise<EditResult> {
  const target = realTarget(file)
  return withFileLock(target, () => {
    let before: string | null = null
    try {
      before = readFileSync(target, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
    const initial = opts.initialText === undefined ? 'schema_version: "1"\n' : opts.initialText
    if (before === null && initial === null) throw new AppError('not_found', `${file} does not exist`)
    const base = before ?? initial!
    const list = typeof edits === 'function' ? edits(yamlToJS(parseDocument(base)) ?? {}) : edits
    const text = editSettingsText(base, list)
    if (text === base) return {file: target, changed: false, created: false, text: before ?? ''}
    opts.check?.(text, before)
    writeFileAtomic(target, text, opts.mode)
    return {file: target, changed: true, created: before === null, text}
  })
}
