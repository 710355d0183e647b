import {mkdir, open, readFile, rm, stat} from 'node:fs/promises'
import {dirname} from 'node:path'

/**
 * One build of a base image at a time per lock file, across processes: two `svc image build`s,
 * or the first agents of several brokers on one host, would otherwise each run debootstrap (a
 * minute or more, and the network) for the same image. The lock is a file holding its owner's
 * PID, made with O_EXCL; a waiter polls, and takes over a lock whose owner is no longer alive
 * (killed mid-build). `fn` runs with the lock held; the file is removed after, whatever happens.
 */
export async function withBuildLock<T>(file: string, fn: () => Promise<T>, o: {pollMs?: number; timeoutMs?: number; waiting?: () => void} = {}): Promise<T> {
  const pollMs = o.pollMs ?? 500
  const deadline = Date.now() + (o.timeoutMs ?? 30 * 60_000)
  await mkdir(dirname(file), {recursive: true})
  let told = false
  for (;;) {
    try {
      const h = await open(file, 'wx')
      await h.writeFile(String(process.pid))
      await h.close()
      break
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
    const owner = await readFile(file, 'utf8').catch(() => '')
    // An empty file is a lock whose owner is writing its PID this instant, unless it is old.
    const writing = owner.trim() === '' && Date.now() - ((await stat(file).catch(() => null))?.mtimeMs ?? 0) < 10_000
    if (!writing && !ownerAlive(owner)) {
      // The owner died. If two waiters both remove it, the O_EXCL create still lets one in.
      await rm(file, {force: true})
      continue
    }
    if (Date.now() > deadline) throw new Error(`another build holds ${file} (process ${await readFile(file, 'utf8').catch(() => '?')})`)
    if (!told) o.waiting?.()
    told = true
    await new Promise((r) => setTimeout(r, pollMs))
  }
  try {
    return await fn()
  } finally {
    await rm(file, {force: true})
  }
}

function ownerAlive(text: string): boolean {
  const pid = Number(text.trim())
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}
