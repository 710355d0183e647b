import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
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
