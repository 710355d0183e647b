import {describe, expect, it} from 'vitest'
import {cloneSource, cloneUrlOf} from './clone-url.js'
import {normalizeGitRemote} from './git-remote.js'

describe('the URL a broker clones', () => {
  it('is the remote as registered, without credentials', () => {
    expect(cloneUrlOf('git@github.com:Acme/Repo.git')).toBe('git@github.com:Acme/Repo.git')
    expect(cloneUrlOf(' https://github.com/Acme/Repo.git ')).toBe('https://github.com/Acme/Repo.git')
    expect(cloneUrlOf('https://x-token:ghp_secret@github.com/Acme/Repo.git')).toBe('https://github.com/Acme/Repo.git')
    expect(cloneUrlOf('https://ghp_secret@github.com/Acme/Repo')).toBe('https://github.com/Acme/Repo')
    expect(cloneUrlOf('ssh://git:pw@example.com:2222/srv/repo.git')).toBe('ssh://git@example.com:2222/srv/repo.git')
    expect(cloneUrlOf('/srv/git/repo.git')).toBe('/srv/git/repo.git')
    expect(cloneUrlOf('file:///srv/git/repo.git')).toBe('file:///srv/git/repo.git')
    expect(cloneUrlOf('https://gitlab.example.com/acme/repo.git?private_token=glpat-secret')).toBe('https://gitlab.example.com/acme/repo.git')
    // A bare host/path is not a path git can clone: it is made https.
    expect(cloneUrlOf('github.com/Acme/Repo')).toBe('https://github.com/Acme/Repo')
  })

  it('falls back, for a project registered without one, to a URL made from its normalised remote', () => {
    expect(cloneSource({gitRemote: 'github.com/Acme/Repo', cloneUrl: 'git@github.com:Acme/Repo.git'})).toBe('git@github.com:Acme/Repo.git')
    expect(cloneSource({gitRemote: 'github.com/Acme/Repo', cloneUrl: null})).toBe('https://github.com/Acme/Repo')
    expect(cloneSource({gitRemote: normalizeGitRemote('/srv/git/repo.git'), cloneUrl: null})).toBe('/srv/git/repo')
    expect(cloneSource({gitRemote: null})).toBeNull()
  })
})
