import {existsSync, statSync} from 'node:fs'
import {dirname, join, resolve} from 'node:path'
import {paths} from './paths.js'

/**
 * The `.svc` directory of the checkout containing `cwd`: the nearest one walking up, never the
 * per-user home's own `~/.svc` (that one holds the global settings).
 */
export function findProjectDir(cwd: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const home = paths(env).home
  let dir = resolve(cwd)
  for (;;) {
    const candidate = join(dir, '.svc')
    if (candidate !== home && existsSync(candidate) && statSync(candidate).isDirectory()) return candidate
    const parent = dirname(dir)
    if (parent === dir) return null
    dir = parent
  }
}

/**
 * The project settings file of the checkout containing `cwd`: the nearest `.svc/settings.yaml`
 * walking up, never the per-user home's own `.svc/settings.yaml` (that one is global).
 */
export function findProjectSettings(cwd: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const globalFile = paths(env).globalSettings
  let dir = resolve(cwd)
  for (;;) {
    const candidate = join(dir, '.svc', 'settings.yaml')
    if (candidate !== globalFile && existsSync(candidate)) return candidate
    const parent = dirname(dir)
    if (parent === dir) return null
    dir = parent
  }
}
