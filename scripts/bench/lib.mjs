// Helpers shared by the bench scripts.
import {readFileSync} from 'node:fs'
import {createServer} from 'node:net'

/** A TCP port free on loopback right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.listen(0, '127.0.0.1', () => {
      const {port} = s.address()
      s.close(() => resolve(port))
    })
    s.on('error', reject)
  })
}

/** CPU time (user + system, all threads) a process has used, in ms, from /proc (Linux). */
export function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
}

/** The 1-minute load average (Linux), printed beside timings taken on a shared machine. */
export const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0]
