import {existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {writeTemplateFiles} from './template-files.js'

describe('writeTemplateFiles', () => {
  const dirs: string[] = []
  const dir = () => {
    const d = mkdtempSync(join(tmpdir(), 'svc-tpl-'))
    dirs.push(d)
    return d
  }
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, {recursive: true, force: true})))

  it('lays out files, nested directories included, byte for byte', () => {
    const d = dir()
    writeTemplateFiles(d, [
      {path: 'README.md', content: Buffer.from('# hi\n').toString('base64')},
      {path: 'conf/deep/x.bin', content: Buffer.from([0, 255, 10]).toString('base64')},
    ])
    expect(readFileSync(join(d, 'README.md'), 'utf8')).toBe('# hi\n')
    expect([...readFileSync(join(d, 'conf/deep/x.bin'))]).toEqual([0, 255, 10])
  })

  it('refuses a path that leaves the workspace', () => {
    const d = dir()
    for (const path of ['../escape', 'a/../../escape', '/etc/passwd']) {
      expect(() => writeTemplateFiles(d, [{path, content: ''}]), path).toThrow(/leaves the workspace|relative path/)
    }
  })
})

describe('writeTemplateFiles against a hostile work tree', () => {
  it('never writes through a symlink (a directory or the file itself) and refuses .git segments of any case', () => {
    const root = mkdtempSync(join(tmpdir(), 'svc-tpl-hostile-'))
    try {
      const work = join(root, 'work')
      const outside = join(root, 'outside')
      mkdirSync(work)
      mkdirSync(outside)
      writeFileSync(join(outside, 'victim.txt'), 'untouched\n')
      // As a checkout could have committed them: a directory link and a file link leading out.
      symlinkSync(outside, join(work, 'linkdir'))
      symlinkSync(join(outside, 'victim.txt'), join(work, 'linkfile'))
      const b64 = Buffer.from('planted\n').toString('base64')
      expect(() => writeTemplateFiles(work, [{path: 'linkdir/new.txt', content: b64}])).toThrow(/symbolic link/)
      expect(existsSync(join(outside, 'new.txt'))).toBe(false)
      // A link at the file's own path is replaced by the file, never written through.
      writeTemplateFiles(work, [{path: 'linkfile', content: b64}])
      expect(readFileSync(join(outside, 'victim.txt'), 'utf8')).toBe('untouched\n')
      expect(lstatSync(join(work, 'linkfile')).isSymbolicLink()).toBe(false)
      for (const path of ['.git/config', '.GIT/hooks/post-commit', 'sub/.Git/x', '.git']) {
        expect(() => writeTemplateFiles(work, [{path, content: b64}]), path).toThrow(/\.git/)
      }
      expect(existsSync(join(work, '.git'))).toBe(false)
    } finally {
      rmSync(root, {recursive: true, force: true})
    }
  })
})
