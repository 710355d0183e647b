import {randomUUID} from 'node:crypto'
import {createReadStream} from 'node:fs'
import {mkdir, readdir, rename, rm, stat} from 'node:fs/promises'
import {dirname, join, relative, sep} from 'node:path'
import type {Readable} from 'node:stream'
import {assertKey, type BlobInfo, type BlobStore, type PutOptions} from './blob-store.js'
import {writeHashed} from './hash-writer.js'

/** Read in 1 MiB pieces: fewer system calls than the 64 KiB default, bounded memory. */
const IO_CHUNK = 1024 * 1024

/**
 * Blobs as files under `root`. Uploads go to `root/.tmp/` and are renamed into place only when
 * complete and accepted, so a reader never sees a partial file and a failed upload leaves
 * nothing behind (the temp file is removed on every failure path).
 */
export function createLocalBlobStore(root: string): BlobStore {
  const tmpDir = join(root, '.tmp')
  const pathOf = (key: string) => {
    assertKey(key)
    return join(root, key)
  }
  return {
    kind: 'local',
    async put(key: string, body: Readable, opts: PutOptions = {}): Promise<BlobInfo> {
      const final = pathOf(key)
      await mkdir(tmpDir, {recursive: true})
      const tmp = join(tmpDir, `${randomUUID()}.part`)
      try {
        // Hashed and written as it is received (hash-writer.ts).
        const info = await writeHashed(body, tmp, opts)
        await opts.accept?.(info)
        await mkdir(dirname(final), {recursive: true})
        await rename(tmp, final)
        return info
      } catch (err) {
        await rm(tmp, {force: true})
        throw err
      }
    },
    async get(key: string) {
      const file = pathOf(key)
      try {
        const st = await stat(file)
        return {stream: createReadStream(file, {highWaterMark: IO_CHUNK}), size: st.size}
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
        throw err
      }
    },
    async delete(key: string) {
      await rm(pathOf(key), {force: true})
    },
    async clearTemp() {
      const names = await readdir(tmpDir).catch(() => [] as string[])
      for (const n of names) await rm(join(tmpDir, n), {force: true, recursive: true})
      return names.length
    },
    async keys(prefix: string, notAfter: Date) {
      const dir = pathOf(prefix)
      const entries = await readdir(dir, {recursive: true, withFileTypes: true}).catch(() => [])
      const out: string[] = []
      for (const e of entries) {
        if (!e.isFile()) continue
        const file = join(e.parentPath, e.name)
        const st = await stat(file).catch(() => null)
        if (st && st.mtimeMs <= notAfter.getTime()) out.push(relative(root, file).split(sep).join('/'))
      }
      return out
    },
  }
}
