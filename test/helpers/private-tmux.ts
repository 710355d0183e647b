import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll} from 'vitest'
import {LocalTmuxRuntime, type LocalTmuxOptions} from '../../src/broker/runtimes/local-tmux.js'
import {runCommand} from '../../src/broker/runtimes/run-command.js'

export interface PrivateTmux {
  /** The test's own directory: TMUX_TMPDIR, and the runtime's state under `state`. */
  dir: string
  env: NodeJS.ProcessEnv
  rt: LocalTmuxRuntime
  /** Kills the runtime's tmux server and removes the directory. */
  dispose(): Promise<void>
}

/**
 * A local runtime on real tmux, on a private server: TMUX_TMPDIR is a directory of the test's
 * own, so a user's tmux is never touched and test files run side by side.
 */
export async function privateTmux(prefix: string, opts: Partial<LocalTmuxOptions> = {}): Promise<PrivateTmux> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  const env: NodeJS.ProcessEnv = {...process.env, TMUX_TMPDIR: dir}
  delete env.TMUX
  const rt = new LocalTmuxRuntime({stateDir: join(dir, 'state'), env, ...opts})
  return {
    dir,
    env,
    rt,
    dispose: async () => {
      await runCommand('tmux', ['-L', opts.socketName ?? 'svc', 'kill-server'], {env})
      await rm(dir, {recursive: true, force: true})
    },
  }
}

/**
 * privateTmux for the tests of a file (or a describe): made before them, handed to `use` (which
 * takes its fields, and may check what the tests need), disposed of after them.
 */
export function usePrivateTmux(prefix: string, opts: Partial<LocalTmuxOptions>, use: (t: PrivateTmux) => void | Promise<void>): void {
  let priv: PrivateTmux | undefined
  beforeAll(async () => {
    priv = await privateTmux(prefix, opts)
    await use(priv)
  })
  afterAll(() => priv?.dispose())
}
