import {randomBytes} from 'node:crypto'
import {closeSync, fchmodSync, fsyncSync, openSync, renameSync, statSync, unlinkSync, writeSync} from 'node:fs'
import {basename, dirname, join} from 'node:path'

/**
 * Replaces `target` with `data` so that readers (and a crash at any moment) see the old file or
 * the new one, never a mix: a temp file in the same directory is written and fsynced, renamed
 * over the target, and the directory is fsynced. The file keeps its mode (new files: `mode`).
 * `target` must be the real path (not a symlink), or the symlink is replaced by a file.
 */
export function writeFileAtomic(target: string, data: string, mode = 0o644): void {
  const dir = dirname(target)
  let fileMode = mode
  try {
    fileMode = statSync(target).mode & 0o777
  } catch {
    // a new file
  }
  const tmp = join(dir, `.${basename(target)}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`)
  const fd = openSync(tmp, 'wx', fileMode)
  try {
    try {
      fchmodSync(fd, fileMode)
      const buf = Buffer.from(data, 'utf8')
      let off = 0
      while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off)
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    renameSync(tmp, target)
  } catch (err) {
    try {
      unlinkSync(tmp)
    } catch {
      // already renamed or never created
    }
    throw err
  }
  const dfd = openSync(dir, 'r')
  try {
    fsyncSync(dfd)
  } finally {
    closeSync(dfd)
  }
}
