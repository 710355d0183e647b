/**
 * Project images (docs/environments.md): a project's committed `.svc/Containerfile`, built by
 * the container engine once per content hash and run for the project's agents on container
 * runtimes (a harness config's own `image` still wins). The Containerfile is built from an empty
 * context (its own text only: the project comes with the workspace, never into the image), with
 * the build argument `SVC_BASE` naming the agent base image (`ARG SVC_BASE` then
 * `FROM ${SVC_BASE}`), and the tag `localhost/svc-project:<hash>` carries the hash of that text
 * and of the base image's tag: an unchanged file is never built twice, a changed one (or a new
 * base) is a new image.
 */
import {createHash} from 'node:crypto'
import {closeSync, constants, fstatSync, lstatSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {AppError} from '../../api/app-error.js'
import {runCommand} from '../runtimes/run-command.js'
import {gitRaw} from '../workspace/git.js'
import {baseImageTag} from './base-recipe.js'

export const PROJECT_IMAGE_REPO = 'localhost/svc-project'
/** A Containerfile larger than this is refused (it is a recipe, not data). */
const MAX_BYTES = 64 * 1024
/** How long one build may take (the Hub waits 15 minutes for a start). */
export const BUILD_TIMEOUT_MS = 12 * 60_000

export function projectImageTag(containerfile: string, base = baseImageTag()): string {
  return `${PROJECT_IMAGE_REPO}:${createHash('sha256').update(base).update('\0').update(containerfile).digest('hex').slice(0, 16)}`
}

/**
 * The text of `<dir>/.svc/Containerfile` in a fresh work tree, or null when there is none: a
 * regular file (never through a link), at most 64 KiB.
 */
export function readContainerfile(dir: string): string | null {
  const svc = lstatSync(join(dir, '.svc'), {throwIfNoEntry: false})
  if (!svc?.isDirectory()) return null
  let fd: number
  try {
    fd = openSync(join(dir, '.svc', 'Containerfile'), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch {
    return null
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) return null
    if (st.size > MAX_BYTES) throw new AppError('image_build_failed', `.svc/Containerfile is ${st.size} bytes: at most ${MAX_BYTES} are taken`)
    const buf = Buffer.alloc(st.size)
    const n = readSync(fd, buf, 0, st.size, 0)
    return buf.subarray(0, n).toString('utf8')
  } finally {
    closeSync(fd)
  }
}

export interface Engine {
  /** Executable and the flags before the subcommand (the runtime's `host`). */
  bin: string
  global: string[]
  env: NodeJS.ProcessEnv
}

export interface ProjectImage {
  image: string
  /** False when the engine had it already. */
  built: boolean
}

/**
 * The project image of a Containerfile: the engine's when it has the tag, else built now.
 * Throws `image_build_failed` with the build's last lines.
 */
export async function ensureProjectImage(engine: Engine, containerfile: string, opts: {progress?: (line: string) => void; timeoutMs?: number; force?: boolean} = {}): Promise<ProjectImage> {
  const base = baseImageTag()
  const image = projectImageTag(containerfile, base)
  const run = (args: string[], timeoutMs: number) => runCommand(engine.bin, [...engine.global, ...args], {env: engine.env, timeoutMs})
  if (!opts.force && (await run(['image', 'inspect', '--format', '{{.Id}}', image], 60_000).catch(() => ({code: 1}))).code === 0) return {image, built: false}
  const context = mkdtempSync(join(tmpdir(), 'svc-project-image-'))
  try {
    writeFileSync(join(context, 'Containerfile'), containerfile)
    opts.progress?.(`building ${image} from .svc/Containerfile (SVC_BASE=${base})`)
    const r = await run(['build', '--build-arg', `SVC_BASE=${base}`, '-f', join(context, 'Containerfile'), '-t', image, context], opts.timeoutMs ?? BUILD_TIMEOUT_MS).catch((err: Error) => ({code: -1, stdout: Buffer.alloc(0), stderr: err.message}))
    if (r.code !== 0) {
      const out = `${r.stdout.toString('utf8')}\n${r.stderr}`.split('\n').filter((l) => l.trim() !== '').slice(-15).join('\n')
      throw new AppError('image_build_failed', `building the project image from .svc/Containerfile failed (exit code ${r.code}); its last lines:\n${out}`)
    }
    return {image, built: true}
  } finally {
    rmSync(context, {recursive: true, force: true})
  }
}

/**
 * The image a new agent of a container runtime runs for its project: the project image of the
 * work tree's committed `.svc/Containerfile` (built now when the engine lacks it), or undefined
 * when there is none or the runtime is no container engine here.
 */
export async function projectImageFor(runtime: {engine?(): Engine}, workdir: string, from: {parent: boolean; checkout: string | null} = {parent: false, checkout: null}): Promise<string | undefined> {
  if (!runtime.engine) return undefined
  const text = await projectContainerfile(workdir, from)
  return text === null ? undefined : (await ensureProjectImage(runtime.engine(), text)).image
}

/**
 * The Containerfile a new agent's image is built from. A child's work tree starts at its parent
 * agent's branch head, which that (hostile) agent wrote: its `.svc/Containerfile` would have the
 * host's container engine run the parent's RUN steps outside every sandbox and network policy.
 * A child takes the one committed on the project's checkout (the user's), or none; any other new
 * work tree is the checkout's or remote's own commit.
 */
export async function projectContainerfile(workdir: string, from: {parent: boolean; checkout: string | null}): Promise<string | null> {
  if (!from.parent) return readContainerfile(workdir)
  return from.checkout ? committedContainerfile(from.checkout) : null
}

/** The `.svc/Containerfile` committed on a checkout's HEAD (what its new agents' work trees get), or null. */
export async function committedContainerfile(checkout: string): Promise<string | null> {
  const r = await gitRaw(['show', 'HEAD:.svc/Containerfile'], {cwd: checkout, timeoutMs: 30_000, maxStdoutBytes: MAX_BYTES})
  return r.code === 0 && !r.truncated ? r.stdout.toString('utf8') : null
}
