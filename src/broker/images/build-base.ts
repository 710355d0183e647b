/**
 * `svc image build`: the agent base image from Debian packages, with no registry. debootstrap
 * (minbase plus the recipe's packages) makes a root file system from the host's Debian mirror,
 * it is packed into a tar kept in a cache directory (keyed by the recipe hash, so a second build,
 * or a build for the other engine, skips the minute debootstrap takes), and the engine imports
 * the tar under the recipe's tag. Needs root (debootstrap makes device nodes and chroots).
 */
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {mkdir, mkdtemp, rename, rm} from 'node:fs/promises'
import {homedir} from 'node:os'
import {join} from 'node:path'
import {AppError} from '../../api/app-error.js'
import {findExecutable} from '../sandbox/host.js'
import {runCommand} from '../runtimes/run-command.js'
import {BASE_RECIPE, baseImageTag, recipeHash, type BaseImageRecipe} from './base-recipe.js'
import {withFileLock} from '../../config/file-lock.js'

export interface BuildOptions {
  engine: 'podman' | 'docker'
  /** Engine executable (default: the engine's name on PATH). */
  bin?: string
  /** Debian mirror (default: the host's apt sources for the suite, else deb.debian.org). */
  mirror?: string
  /** Where root file system tars are kept (default `$XDG_CACHE_HOME/svc/images`, `~/.cache/svc/images`). */
  cacheDir?: string
  /** Build even when the engine has the image, and debootstrap again even with a cached tar. */
  force?: boolean
  env?: NodeJS.ProcessEnv
  progress?: (line: string) => void
  recipe?: BaseImageRecipe
}

export interface BuildResult {
  image: string
  engine: string
  /** False when the engine already had the image (nothing was done). */
  built: boolean
  /** The root file system tar used (made now or found in the cache). */
  rootfs: string
  rootfsCached: boolean
}

const fail = (message: string) => new AppError('image_build_failed', message)

export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache'), 'svc', 'images')
}

/**
 * The Debian mirror of the host's apt sources that serves `suite` (deb822 `.sources` and
 * one-line `.list` files), ignoring security and third-party repositories.
 */
export function debianMirror(suite: string, files: Array<{name: string; text: string}>): string | undefined {
  for (const f of files) {
    if (f.name.endsWith('.sources')) {
      for (const stanza of f.text.split(/\n\s*\n/)) {
        const field = (k: string) => new RegExp(`^${k}:\\s*(.+)$`, 'mi').exec(stanza)?.[1].trim().split(/\s+/) ?? []
        if (!field('Types').includes('deb') || !field('Suites').includes(suite)) continue
        const uri = field('URIs').find((u) => /\/debian\/?$/.test(u))
        if (uri) return uri
      }
    } else {
      for (const line of f.text.split('\n')) {
        const m = /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)/.exec(line.trim())
        if (m && m[2] === suite && /\/debian\/?$/.test(m[1])) return m[1]
      }
    }
  }
  return undefined
}

function hostAptSources(): Array<{name: string; text: string}> {
  const out: Array<{name: string; text: string}> = []
  const read = (name: string) => {
    try {
      out.push({name, text: readFileSync(name, 'utf8')})
    } catch {
      // Missing or unreadable: the next one may do.
    }
  }
  read('/etc/apt/sources.list')
  try {
    for (const f of readdirSync('/etc/apt/sources.list.d').sort()) read(join('/etc/apt/sources.list.d', f))
  } catch {
    // No directory.
  }
  return out
}

export async function buildBaseImage(o: BuildOptions): Promise<BuildResult> {
  const recipe = o.recipe ?? BASE_RECIPE
  const env = o.env ?? process.env
  const bin = o.bin ?? o.engine
  const image = baseImageTag(recipe)
  const say = o.progress ?? (() => {})
  const cacheDir = o.cacheDir ?? defaultCacheDir(env)
  const rootfs = join(cacheDir, `${recipe.suite}-${recipeHash(recipe)}.tar`)
  const present = async () => {
    const has = await runCommand(bin, ['image', 'inspect', '--format', '{{.Id}}', image], {env, timeoutMs: 60_000}).catch((err: Error) => {
      throw fail(`${bin} cannot be run: ${err.message} (Debian: apt-get install ${o.engine === 'podman' ? 'podman runc' : 'docker.io'})`)
    })
    return has.code === 0 && !o.force
  }
  const unchanged = (): BuildResult => ({image, engine: o.engine, built: false, rootfs, rootfsCached: existsSync(rootfs)})
  if (await present()) return unchanged()
  // Another `svc image build` of the same recipe on this host (a second terminal, test files
  // side by side) is waited for, then found done, instead of repeated.
  // The lock is the cached tar's (`<tar>.lock`): it guards the debootstrap that makes it too.
  await mkdir(cacheDir, {recursive: true})
  return withFileLock(
    rootfs,
    async () => {
      if (await present()) return unchanged()
      const rootfsCached = existsSync(rootfs) && !o.force
      if (!rootfsCached) await debootstrapTar(recipe, rootfs, o.mirror ?? debianMirror(recipe.suite, hostAptSources()) ?? 'http://deb.debian.org/debian', env, say)
      else say(`using the cached root file system ${rootfs}`)
      say(`importing ${image} into ${o.engine}`)
      const imp = await runCommand(bin, ['import', '--change', 'CMD ["/bin/bash"]', rootfs, image], {env, timeoutMs: 600_000})
      if (imp.code !== 0) throw fail(`${bin} import failed: ${imp.stderr || `exit code ${imp.code}`}`)
      return {image, engine: o.engine, built: true, rootfs, rootfsCached}
    },
    {timeoutMs: 30 * 60_000},
  )
}

async function debootstrapTar(recipe: BaseImageRecipe, target: string, mirror: string, env: NodeJS.ProcessEnv, say: (line: string) => void) {
  const path = `${env.PATH ?? ''}:/usr/sbin:/sbin`
  const debootstrap = findExecutable('debootstrap', path)
  if (!debootstrap) throw fail('debootstrap is not installed (Debian: apt-get install debootstrap)')
  if (process.getuid?.() !== 0) throw fail('building the base image runs debootstrap, which needs root: run `svc image build` as root (or with sudo)')
  await mkdir(join(target, '..'), {recursive: true})
  const work = await mkdtemp(join(target, '..', 'build-'))
  try {
    const dir = join(work, 'rootfs')
    say(`debootstrap --variant=${recipe.variant} ${recipe.suite} from ${mirror} (about a minute)`)
    const args = [`--variant=${recipe.variant}`, `--include=${recipe.packages.join(',')}`, recipe.suite, dir, mirror]
    const r = await runCommand(debootstrap, args, {env: {...env, PATH: path}, timeoutMs: 30 * 60_000})
    if (r.code !== 0) throw fail(`debootstrap failed: ${r.stderr.split('\n').slice(-5).join('\n') || `exit code ${r.code}`}`)
    // Downloaded packages and indexes are not needed in the image.
    for (const d of ['var/cache/apt/archives', 'var/lib/apt/lists']) {
      for (const f of readdirSync(join(dir, d))) if (f.endsWith('.deb') || (d.endsWith('lists') && f !== 'lock' && f !== 'partial')) await rm(join(dir, d, f), {force: true})
    }
    say(`packing ${target}`)
    const tmp = join(work, 'rootfs.tar')
    const t = await runCommand('tar', ['--numeric-owner', '-C', dir, '-cf', tmp, '.'], {env, timeoutMs: 10 * 60_000})
    if (t.code !== 0) throw fail(`tar failed: ${t.stderr}`)
    await rename(tmp, target)
  } finally {
    await rm(work, {recursive: true, force: true})
  }
}
