import {createReadStream} from 'node:fs'
import {chmod, rename, rm, stat} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {basename, dirname, join} from 'node:path'
import {pipeline} from 'node:stream/promises'
import {randomBytes} from 'node:crypto'
import {Args, Flags} from '@oclif/core'
import {AppError} from '../../src/api/app-error.js'
import {formatArtifactRef, parseArtifactRef} from '../../src/api/artifact-ref.js'
import {BaseCommand} from '../../src/cli/base-command.js'
import {progressBar} from '../../src/cli/progress.js'

interface Result {
  ref: string
  artifact: {id: string; title: string}
  version: {seq: number; ref: string}
  file: {path: string; size: number; sha256: string; mediaType: string}
  /** Where the file was written; null for stdout. */
  out: string | null
}

const isDir = async (p: string) => (await stat(p).catch(() => null))?.isDirectory() ?? false

export default class ArtifactGet extends BaseCommand<Result> {
  static override description = `Fetch an artifact's file to stdout or to a path.

REF is svc://artifact/<id>, svc://artifact/<id>@<seq> (one version) or a bare <id>. The bytes are checked against the recorded SHA-256 before anything is written; a mismatch fails and leaves any existing file untouched. An existing directory receives the file under its own name; replacing a file is atomic.`
  static override examples = ['<%= config.bin %> artifact get svc://artifact/<id> -o ./out/', '<%= config.bin %> artifact get <id>@2 > report.md']
  static override args = {ref: Args.string({description: 'Artifact reference.', required: true})}
  static override flags = {
    out: Flags.string({char: 'o', description: 'File or existing directory to write to (default: stdout).'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute(): Promise<Result> {
    const {args, flags} = await this.parse(ArtifactGet)
    const ref = parseArtifactRef(args.ref)
    if (!ref) throw new AppError('usage_error', `not an artifact reference: "${args.ref}" (expected svc://artifact/<id>[@<seq>] or <id>)`)
    if (this.json && !flags.out) throw new AppError('usage_error', '--json prints a JSON document on stdout: pass --out for the file')
    const client = await this.client(flags.hub)
    const {artifact, version} = await client.getArtifact(ref.id, ref.seq)
    const entry = version.manifest[0]
    if (!entry) throw new AppError('not_found', 'this artifact version has no files')

    let dest: string | null = null
    if (flags.out) dest = (await isDir(flags.out)) ? join(flags.out, basename(entry.path)) : flags.out
    // Downloaded beside the destination (same file system: the rename is atomic), or to the
    // temp directory for stdout; written nowhere else until the digest has been checked.
    const tmp = join(dest ? dirname(dest) : tmpdir(), `.${basename(dest ?? entry.path)}.${randomBytes(6).toString('hex')}.svc-tmp`)
    const bar = progressBar('downloading', entry.size)
    try {
      const got = await client.downloadArtifactFile(artifact.id, version.seq, entry.path, tmp, bar.onProgress)
      bar.done()
      if (got.sha256 !== entry.sha256 || got.size !== entry.size) {
        throw new AppError('sha256_mismatch', `the downloaded bytes of ${version.ref} do not match its recorded SHA-256; nothing was written`, {expected: entry.sha256, actual: got.sha256, size: got.size})
      }
      if (dest) {
        const existing = await stat(dest).catch(() => null)
        if (existing?.isFile()) await chmod(tmp, existing.mode & 0o7777)
        await rename(tmp, dest)
      } else {
        await pipeline(createReadStream(tmp, {highWaterMark: 1024 * 1024}), process.stdout, {end: false})
      }
    } finally {
      bar.done()
      await rm(tmp, {force: true})
    }
    return {
      ref: formatArtifactRef(artifact.id, ref.seq),
      artifact: {id: artifact.id, title: artifact.title},
      version: {seq: version.seq, ref: version.ref},
      file: entry,
      out: dest,
    }
  }

  protected override human(r: Result): string | null {
    return r.out ? `Wrote ${r.out} (${r.file.size} bytes, ${r.version.ref})` : null
  }
}
