// Helpers shared by the bench scripts.
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
