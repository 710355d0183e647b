import type {ChildProcess} from 'node:child_process'
import {BIN, cliEnv} from './cli.js'
import {waitFor} from './live-hub.js'
import type {NetNs} from './netns.js'

export interface NetnsBroker {
  child: ChildProcess
  brokerId: string
  stderr: () => string
}

/**
 * `svc broker start` on another host: inside `space`, given `hubs` (each replica as the
 * namespace reaches it, `http://<hostIp>:<port>`), local runtime, its tmux under `stateDir`, no
 * container engine. Resolves on its ready line (JSON, with its broker ID); rejects if it exits first.
 */
export async function startBrokerIn(space: NetNs, o: {home: string; hubs: string[]; stateDir: string; joinToken?: string}): Promise<NetnsBroker> {
  const env = cliEnv(o.home, {TMUX_TMPDIR: o.stateDir, DOCKER_HOST: 'unix:///nonexistent/docker.sock', CONTAINER_HOST: 'unix:///nonexistent/podman.sock'})
  const args = [BIN, 'broker', 'start', '--hub', o.hubs.join(','), '--state-dir', o.stateDir, '--runtime', 'local', '--port', '0', '--json', ...(o.joinToken ? ['--join-token', o.joinToken] : [])]
  const child = space.spawnIn(process.execPath, args, {env, stdio: ['ignore', 'pipe', 'pipe']})
  let out = ''
  let err = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (err += d))
  const line = await waitFor(() => {
    if (child.exitCode !== null) throw new Error(`broker exited ${child.exitCode}: ${err}`)
    return out.split('\n').find((l) => l.startsWith('{'))
  }, 60_000, 'the broker ready line')
  return {child, brokerId: JSON.parse(line).brokerId, stderr: () => err}
}
