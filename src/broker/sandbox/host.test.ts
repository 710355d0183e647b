import {chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {nodeInterpreter} from './host.js'

describe('the node a harness script runs with', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-host-'))
  afterAll(() => rmSync(dir, {recursive: true, force: true}))
  const file = (name: string, text: string) => {
    const p = join(dir, name)
    writeFileSync(p, text)
    chmodSync(p, 0o755)
    return p
  }
  // A PATH whose only node is a symlink to this process's node, as version managers lay it out.
  const bin = join(dir, 'bin')
  const node = realpathSync(process.execPath)
  mkdirSync(bin)
  symlinkSync(process.execPath, join(bin, 'node'))

  it('a `#!/usr/bin/env node` script (npm\'s launcher of Codex or Gemini CLI): the node on PATH, its real path', () => {
    expect(nodeInterpreter(file('gemini.js', '#!/usr/bin/env node\nconsole.log(1)\n'), bin)).toEqual([node])
    // Options as the kernel and env pass them.
    expect(nodeInterpreter(file('flags.js', '#!/usr/bin/env -S node --no-warnings --max-old-space-size=4096\n'), bin)).toEqual([node, '--no-warnings', '--max-old-space-size=4096'])
    // Through the .bin symlink npm makes.
    symlinkSync(join(dir, 'gemini.js'), join(dir, 'gemini'))
    expect(nodeInterpreter(join(dir, 'gemini'), bin)).toEqual([node])
  })

  it('a node named outright is that node', () => {
    expect(nodeInterpreter(file('direct.js', `#!${join(bin, 'node')}\n`), '/nonexistent')).toEqual([node])
    expect(nodeInterpreter(file('direct-opts.js', `#!${join(bin, 'node')} --no-warnings --trace-deprecation\n`), '/nonexistent')).toEqual([node, '--no-warnings --trace-deprecation'])
  })

  it('nothing for a native binary, a shell script, a node not found, or a relative name', () => {
    expect(nodeInterpreter(node, bin)).toBeUndefined()
    expect(nodeInterpreter(file('run.sh', '#!/bin/sh\nexec true\n'), bin)).toBeUndefined()
    expect(nodeInterpreter(file('nonode.js', '#!/usr/bin/env node\n'), '/nonexistent')).toBeUndefined()
    expect(nodeInterpreter('gemini', bin)).toBeUndefined()
    expect(nodeInterpreter(join(dir, 'missing'), bin)).toBeUndefined()
  })
})
