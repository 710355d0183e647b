import {chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync} from 'node:fs'
import {dirname} from 'node:path'
import {DEV_TOKEN_PATTERN, newSecret, TOKEN_PREFIX} from '../shared/secrets.js'

/**
 * Returns the dev credential stored at `file`, creating it (mode 0600) when absent or malformed.
 * The write goes to a temp file created 0600 and is renamed into place, so no reader ever sees a
 * partial token or a moment where the file is readable by others.
 */
export function ensureDevToken(file: string): string {
  try {
    const existing = readFileSync(file, 'utf8').trim()
    if (DEV_TOKEN_PATTERN.test(existing)) {
      chmodSync(file, 0o600)
      return existing
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  mkdirSync(dirname(file), {recursive: true, mode: 0o700})
  const token = newSecret(TOKEN_PREFIX.dev)
  const tmp = `${file}.${process.pid}.tmp`
  writeFileSync(tmp, token + '\n', {mode: 0o600})
  renameSync(tmp, file)
  return token
}
