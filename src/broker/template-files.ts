/**
 * Lays an agent's template files into its new work tree, on the host, before the agent runs.
 * The work tree is the checkout's content, and a checkout may hold symlinks (committed by anyone,
 * an agent included): so every directory on the way is checked not to be a link, the file is
 * opened with O_NOFOLLOW and O_EXCL after the old one is removed, and a `.git` segment (any case)
 * is refused outright, so a template never writes outside the work tree or into a repository.
 */
import {closeSync, constants, lstatSync, mkdirSync, openSync, unlinkSync, writeSync} from 'node:fs'
import {join, resolve} from 'node:path'
import {templatePathProblem} from '../api/template-paths.js'

export class TemplateFileError extends Error {
  readonly code = 'bad_template'
}

export function writeTemplateFiles(dir: string, files: Array<{path: string; content: string}>): void {
  const root = resolve(dir)
  for (const f of files) {
    const problem = templatePathProblem(f.path)
    if (problem) throw new TemplateFileError(`template path ${JSON.stringify(f.path)} ${problem}`)
    const segs = f.path.split('/')
    let at = root
    for (const seg of segs.slice(0, -1)) {
      at = join(at, seg)
      const st = lstatSync(at, {throwIfNoEntry: false})
      if (!st) mkdirSync(at, {mode: 0o755})
      else if (!st.isDirectory()) throw new TemplateFileError(`template path ${JSON.stringify(f.path)} leads through ${seg}, which is ${st.isSymbolicLink() ? 'a symbolic link' : 'not a directory'} in the workspace`)
    }
    const target = join(at, segs[segs.length - 1]!)
    const st = lstatSync(target, {throwIfNoEntry: false})
    if (st?.isDirectory()) throw new TemplateFileError(`template path ${JSON.stringify(f.path)} is a directory in the workspace`)
    // A link (or a file) there is replaced, never written through.
    if (st) unlinkSync(target)
    const fd = openSync(target, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644)
    try {
      writeSync(fd, Buffer.from(f.content, 'base64'))
    } finally {
      closeSync(fd)
    }
  }
}
