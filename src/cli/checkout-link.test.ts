import {describe, expect, it} from 'vitest'
import {execFileSync} from 'node:child_process'
import * as fs from 'node:fs'
import {hostname, networkInterfaces, tmpdir} from 'node:os'
import {join} from 'node:path'
import {checkoutLink, excludeLinkFile, hubOnThisMachine, isLoopbackUrl, linkNote} from './checkout-link.js'

describe('svc project register: what a checkout links', () => {
  it('only a Hub on this machine gets the checkout as localPath', () => {
    for (const url of ['http://127.0.0.1:9810', 'http://localhost:9810', 'http://[::1]:9810', 'http://127.1.2.3']) expect(isLoopbackUrl(url), url).toBe(true)
    for (const url of ['https://hub.example.com', 'http://10.0.0.5:9810', 'http://127.0.0.1.example.com', 'not a url']) expect(isLoopbackUrl(url), url).toBe(false)
    const base = {checkout: '/src/app', origin: 'git@github.com:acme/app.git', noLink: false}
    expect(checkoutLink({...base, hubLocal: true})).toEqual({checkout: '/src/app', sendPath: true})
    expect(checkoutLink({...base, hubLocal: false})).toEqual({checkout: '/src/app', sendPath: false})
  })

  it('a Hub reached at this machine\'s name or one of its own addresses is on this machine; another is not', async () => {
    expect(await hubOnThisMachine('http://127.0.0.1:9810')).toBe(true)
    expect(await hubOnThisMachine(`http://${hostname()}:9810`)).toBe(true)
    const own = Object.values(networkInterfaces()).flatMap((l) => l ?? []).find((i) => i.family === 'IPv4' && !i.internal)
    if (own) expect(await hubOnThisMachine(`http://${own.address}:9810`)).toBe(true)
    // TEST-NET-3 (RFC 5737): never an address of this machine; and a name that does not resolve.
    expect(await hubOnThisMachine('http://203.0.113.7:9810')).toBe(false)
    expect(await hubOnThisMachine('http://no-such-host.invalid:9810')).toBe(false)
  })

  it('--remote of another repository does not link this checkout; the same repository spelled otherwise does', () => {
    const base = {checkout: '/src/svc', origin: 'git@github.com:acme/svc.git', noLink: false, hubLocal: true}
    expect(checkoutLink({...base, remoteFlag: 'git@github.com:acme/demo.git'})).toEqual({checkout: null, sendPath: false, skipped: "this checkout's origin is git@github.com:acme/svc.git, not git@github.com:acme/demo.git"})
    expect(checkoutLink({...base, remoteFlag: 'https://github.com/acme/svc'})).toEqual({checkout: '/src/svc', sendPath: true})
    // A checkout with no origin yet is linked to the remote given.
    expect(checkoutLink({...base, origin: null, remoteFlag: 'git@github.com:acme/demo.git'})).toEqual({checkout: '/src/svc', sendPath: true})
    expect(checkoutLink({...base, noLink: true})).toEqual({checkout: null, sendPath: false})
    expect(checkoutLink({...base, checkout: null})).toEqual({checkout: null, sendPath: false})
  })

  it('says where the agents of the linked project work', () => {
    const file = '/src/app/.svc/settings.yaml'
    expect(linkNote({id: 'p1', localPath: '/src/app'}, {checkout: '/src/app', sendPath: true}, file)).toBe(`Linked this checkout (hub.grove_id in ${file}): agents created here work in repositories of their own made from it; their branches come back to it when they are merged, pushed or deleted.`)
    expect(linkNote({id: 'p1', localPath: '/elsewhere/app'}, {checkout: '/src/app', sendPath: true}, file)).toMatch(/its agents work in repositories of their own made from \/elsewhere\/app, the checkout it was registered with/)
    expect(linkNote({id: 'p1', localPath: null, gitRemote: 'github.com/acme/app'}, {checkout: '/src/app', sendPath: false}, file)).toMatch(/the Hub is not on this machine, so its agents work in clones of the project's remote/)
    expect(linkNote({id: 'p1', localPath: null, gitRemote: null}, {checkout: '/src/app', sendPath: false}, file)).toMatch(/no remote, so its agents start in an empty directory: register it with --remote/)
    expect(linkNote({id: 'p1'}, {checkout: null, sendPath: false, skipped: 'x'}, null)).toBe('Not linked: x. Use it with --project p1, SVC_HUB_GROVE_ID, or hub.grove_id in .svc/settings.yaml.')
  })
})

describe('excludeLinkFile: the link file in <git-common-dir>/info/exclude', () => {
  const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-C', cwd, ...args], {encoding: 'utf8', env: {...process.env, GIT_AUTHOR_NAME: 'D', GIT_AUTHOR_EMAIL: 'd@x', GIT_COMMITTER_NAME: 'D', GIT_COMMITTER_EMAIL: 'd@x'}}).trim()
  const repo = () => {
    const dir = fs.mkdtempSync(join(tmpdir(), 'svc-exclude-'))
    git(dir, 'init', '-q', '-b', 'main')
    fs.writeFileSync(join(dir, 'a.txt'), 'a\n')
    git(dir, 'add', 'a.txt')
    git(dir, 'commit', '-q', '-m', 'a')
    fs.mkdirSync(join(dir, '.svc'))
    fs.writeFileSync(join(dir, '.svc', 'settings.yaml'), 'hub:\n  grove_id: p1\n')
    return dir
  }

  it('writes the line once, keeps what the file held, and leaves a file git already ignores or tracks alone', async () => {
    const dir = repo()
    try {
      expect(git(dir, 'status', '--porcelain')).toBe('?? .svc/')
      fs.writeFileSync(join(dir, '.git', 'info', 'exclude'), '# mine\n*.swp')
      expect(await excludeLinkFile(dir)).toBe(join(dir, '.git', 'info', 'exclude'))
      expect(fs.readFileSync(join(dir, '.git', 'info', 'exclude'), 'utf8')).toMatch(/^# mine\n\*\.swp\n# svc project register: .*\n\/\.svc\/settings\.yaml\n$/)
      expect(git(dir, 'status', '--porcelain')).toBe('')
      expect(await excludeLinkFile(dir)).toBeNull()
      expect(fs.readFileSync(join(dir, '.git', 'info', 'exclude'), 'utf8').match(/\.svc/g)).toHaveLength(1)
    } finally {
      fs.rmSync(dir, {recursive: true, force: true})
    }
    const ignored = repo()
    try {
      fs.writeFileSync(join(ignored, '.gitignore'), '.svc/\n')
      expect(await excludeLinkFile(ignored)).toBeNull()
      git(ignored, 'add', '-f', '.svc/settings.yaml')
      fs.rmSync(join(ignored, '.gitignore'))
      expect(await excludeLinkFile(ignored)).toBeNull()
      expect(fs.readFileSync(join(ignored, '.git', 'info', 'exclude'), 'utf8')).not.toContain('.svc')
    } finally {
      fs.rmSync(ignored, {recursive: true, force: true})
    }
  })
})
