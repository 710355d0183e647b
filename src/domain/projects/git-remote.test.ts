import fc from 'fast-check'
import {describe, expect, it} from 'vitest'
import {normalizeGitRemote, slugify} from './git-remote.js'

describe('normalizeGitRemote', () => {
  it.each([
    ['git@github.com:Org/Repo.git', 'github.com/Org/Repo'],
    ['git@github.com:Org/Repo', 'github.com/Org/Repo'],
    ['https://github.com/Org/Repo', 'github.com/Org/Repo'],
    ['https://github.com/Org/Repo.git', 'github.com/Org/Repo'],
    ['https://github.com/Org/Repo/', 'github.com/Org/Repo'],
    ['https://user:secret@github.com/Org/Repo.git', 'github.com/Org/Repo'],
    ['ssh://git@github.com/Org/Repo.git', 'github.com/Org/Repo'],
    ['ssh://git@GitHub.COM/Org/Repo.git', 'github.com/Org/Repo'],
    ['ssh://git@gitlab.example.com:2222/group/sub/repo.git', 'gitlab.example.com:2222/group/sub/repo'],
    ['github.com/Org/Repo', 'github.com/Org/Repo'],
    ['  git@github.com:Org/Repo.git  ', 'github.com/Org/Repo'],
    ['/srv/git/repo.git', 'file/srv/git/repo'],
    ['file:///srv/git/repo.git', 'file/srv/git/repo'],
  ])('%s -> %s', (input, want) => {
    expect(normalizeGitRemote(input)).toBe(want)
  })

  it('keeps the case of the path (some servers care)', () => {
    expect(normalizeGitRemote('https://github.com/Org/Repo')).not.toBe(normalizeGitRemote('https://github.com/org/repo'))
  })

  it.each(['', '   ', 'not a remote', 'repo', 'https://', 'https://github.com', 'git@github.com:'])('%j is not a remote', (input) => {
    expect(normalizeGitRemote(input)).toBeNull()
  })

  it('every spelling of one GitHub repository normalises to the same key, and normalising is idempotent', () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,15}$/)
    fc.assert(
      fc.property(segment, segment, (org, repo) => {
        const forms = [`git@github.com:${org}/${repo}.git`, `https://github.com/${org}/${repo}`, `ssh://git@github.com/${org}/${repo}.git`, `https://GitHub.com/${org}/${repo}/`]
        const keys = new Set(forms.map(normalizeGitRemote))
        expect([...keys]).toEqual([`github.com/${org}/${repo}`])
        expect(normalizeGitRemote(`github.com/${org}/${repo}`)).toBe(`github.com/${org}/${repo}`)
      }),
    )
  })
})

describe('slugify', () => {
  it.each([
    ['My Project!', 'my-project'],
    ['  Café  Déjà vu ', 'cafe-deja-vu'],
    ['---', 'project'],
    ['a'.repeat(80), 'a'.repeat(60)],
  ])('%j -> %j', (input, want) => {
    expect(slugify(input)).toBe(want)
  })
})
