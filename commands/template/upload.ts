import {createHash} from 'node:crypto'
import {readdirSync, readFileSync, statSync} from 'node:fs'
import {basename, join, relative, sep} from 'node:path'
import {Args, Flags} from '@oclif/core'
import {AppError} from '../../src/api/app-error.js'
import {BaseCommand} from '../../src/cli/base-command.js'
import {agentsApi, type TemplateInfo} from '../../src/client/agents-client.js'

type Result = {template: TemplateInfo; version: {seq: number; manifest: Array<{path: string; size: number; sha256: string}>}; created: boolean}

/** Regular files under `dir`, recursively, skipping `.git`; paths relative with `/`. */
function filesOf(dir: string): string[] {
  const out: string[] = []
  const walk = (d: string) => {
    for (const e of readdirSync(d, {withFileTypes: true})) {
      if (e.name === '.git') continue
      const p = join(d, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.isFile()) out.push(relative(dir, p).split(sep).join('/'))
    }
  }
  walk(dir)
  return out.sort()
}

export default class TemplateUpload extends BaseCommand<Result> {
  static override description = 'Upload a directory (or one file) as a template, or as a new version of the template of that name.'
  static override args = {path: Args.string({description: 'Directory or file to upload.', required: true})}
  static override flags = {
    name: Flags.string({description: 'Template name (default: the directory\'s name).'}),
    project: Flags.string({description: 'Project of the template (default: hub-wide, system admins only).'}),
    description: Flags.string({description: 'Description.'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute() {
    const {args, flags} = await this.parse(TemplateUpload)
    let st
    try {
      st = statSync(args.path)
    } catch {
      throw new AppError('usage_error', `${args.path}: no such file or directory`)
    }
    const root = st.isDirectory() ? args.path : join(args.path, '..')
    const paths = st.isDirectory() ? filesOf(args.path) : [basename(args.path)]
    if (paths.length === 0) throw new AppError('usage_error', `${args.path} holds no files`)
    const files = paths.map((p) => {
      const bytes = readFileSync(join(root, p))
      return {path: p, content: bytes.toString('base64'), sha256: createHash('sha256').update(bytes).digest('hex')}
    })
    const name = flags.name ?? basename(st.isDirectory() ? args.path.replace(/\/+$/, '') : args.path.replace(/\.[^.]*$/, ''))
    return agentsApi(await this.client(flags.hub)).uploadTemplate({name, projectId: flags.project ?? null, description: flags.description, files})
  }

  protected override human(r: Result): string {
    return `${r.created ? 'Created' : 'Updated'} template ${r.template.name} (${r.template.id}), version ${r.version.seq} with ${r.version.manifest.length} file${r.version.manifest.length === 1 ? '' : 's'}.`
  }
}
