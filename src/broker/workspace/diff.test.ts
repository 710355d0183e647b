import {rmSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {BINARY, makeRepos, sh, write, type TestRepos} from '../../../test/helpers/git-repos.js'
import {workspaceDiff} from './diff.js'

describe('workspaceDiff: an agent worktree against its base commit', () => {
  let repos: TestRepos
  beforeEach(() => (repos = makeRepos()))
  afterEach(() => repos.dispose())

  it('an untouched worktree has an empty diff', async () => {
    const ws = await repos.addAgent('idle')
    const d = await workspaceDiff(ws.paths, ws)
    expect(d).toEqual({base: {ref: 'main', commit: ws.baseCommit}, head: {branch: 'svc/idle', commit: ws.baseCommit}, files: [], patch: '', truncated: false})
  })

  it('committed, staged, unstaged and untracked changes all count; ignored files do not; the agent index is untouched', async () => {
    const ws = await repos.addAgent('busy')
    write(ws.path, 'src/app.ts', 'export const a = 1\nexport const b = 20\nexport const c = 3\n')
    sh(ws.path, 'commit', '-qam', 'agent commit')
    write(ws.path, 'README.md', '# demo\nmore\n')
    sh(ws.path, 'add', 'README.md')
    write(ws.path, 'src/new.ts', 'export const fresh = true\n')
    write(ws.path, 'debug.log', 'ignored\n')
    const statusBefore = sh(ws.path, 'status', '--porcelain')
    const d = await workspaceDiff(ws.paths, ws)
    expect(d.head.commit).toBe(sh(ws.path, 'rev-parse', 'HEAD'))
    expect(d.files).toEqual(
      expect.arrayContaining([
        {path: 'src/app.ts', status: 'modified', additions: 1, deletions: 1},
        {path: 'README.md', status: 'modified', additions: 1, deletions: 0},
        {path: 'src/new.ts', status: 'added', additions: 1, deletions: 0},
      ]),
    )
    expect(d.files).toHaveLength(3)
    expect(d.patch).toContain('diff --git a/src/new.ts b/src/new.ts')
    expect(d.patch).toContain('+export const b = 20')
    expect(d.patch).not.toContain('debug.log')
    expect(sh(ws.path, 'status', '--porcelain')).toBe(statusBefore)
  })

  it('binary files are listed, not dumped; renames and deletions are reported as such', async () => {
    const ws = await repos.addAgent('mixed')
    write(ws.path, 'logo.png', Buffer.concat([BINARY, BINARY]))
    write(ws.path, 'assets/icon.bin', BINARY)
    sh(ws.path, 'mv', 'src/old-name.ts', 'src/new-name.ts')
    rmSync(join(ws.path, 'docs/remove-me.md'))
    const d = await workspaceDiff(ws.paths, ws)
    const byPath = Object.fromEntries(d.files.map((f) => [f.path, f]))
    expect(byPath['logo.png']).toEqual({path: 'logo.png', status: 'modified', additions: 0, deletions: 0, binary: true})
    expect(byPath['assets/icon.bin']).toEqual({path: 'assets/icon.bin', status: 'added', additions: 0, deletions: 0, binary: true})
    expect(byPath['src/new-name.ts']).toEqual({path: 'src/new-name.ts', status: 'renamed', additions: 0, deletions: 0, oldPath: 'src/old-name.ts'})
    expect(byPath['docs/remove-me.md']).toEqual({path: 'docs/remove-me.md', status: 'deleted', additions: 0, deletions: 1})
    expect(d.files).toHaveLength(4)
    expect(d.patch).toContain('Binary files a/logo.png and b/logo.png differ')
    expect(d.patch).not.toContain('\x00')
    expect(d.patch).toContain('rename from src/old-name.ts')
  })

  it('a huge diff keeps the full file list and cuts the patch at a file boundary with truncated: true', async () => {
    const ws = await repos.addAgent('huge')
    for (let i = 0; i < 300; i++) write(ws.path, `gen/file-${String(i).padStart(3, '0')}.txt`, `${'line of generated text\n'.repeat(50)}`)
    const d = await workspaceDiff(ws.paths, ws, {maxBytes: 64 * 1024})
    expect(d.files).toHaveLength(300)
    expect(d.truncated).toBe(true)
    expect(Buffer.byteLength(d.patch)).toBeLessThanOrEqual(64 * 1024)
    expect(d.patch.startsWith('diff --git ')).toBe(true)
    // Every file section kept is whole: it ends with its last added line.
    const sections = d.patch.split(/^(?=diff --git )/m)
    for (const s of sections) expect(s.endsWith('+line of generated text\n')).toBe(true)
    const full = await workspaceDiff(ws.paths, ws, {maxBytes: 8 * 1024 * 1024})
    expect(full.truncated).toBe(false)
    expect(full.patch.split(/^diff --git /m)).toHaveLength(301)
  })

  it('--stat form: files without the patch', async () => {
    const ws = await repos.addAgent('stat')
    write(ws.path, 'README.md', 'changed\n')
    const d = await workspaceDiff(ws.paths, ws, {stat: true})
    expect(d.files).toEqual([{path: 'README.md', status: 'modified', additions: 1, deletions: 1}])
    expect(d.patch).toBe('')
    expect(d.truncated).toBe(false)
  })

  it("once the work tree is removed, the branch tip in the agent's repository is diffed", async () => {
    const ws = await repos.addAgent('gone')
    write(ws.path, 'src/app.ts', 'replaced\n')
    sh(ws.path, 'commit', '-qam', 'work')
    const tip = sh(ws.path, 'rev-parse', 'HEAD')
    rmSync(ws.path, {recursive: true, force: true})
    const d = await workspaceDiff(ws.paths, ws)
    expect(d.head).toEqual({branch: 'svc/gone', commit: tip})
    expect(d.files).toEqual([{path: 'src/app.ts', status: 'modified', additions: 1, deletions: 3}])
  })
})
