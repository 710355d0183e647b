import {describe, expect, it} from 'vitest'
import {bwrapArgs, sandboxEnv, type SandboxPolicy} from './policy.js'

const base: SandboxPolicy = {
  workdir: '/work/agents/a1',
  home: '/state/homes/a1',
  writable: [],
  readable: [],
  system: [{path: '/usr'}, {path: '/bin', symlinkTo: 'usr/bin'}, {path: '/etc'}],
  masked: ['/etc/shadow'],
}

/** The mount flags as [flag, src, dest] triples (and pairs for --dev/--proc/--tmpfs). */
function mounts(args: string[]): string[][] {
  const out: string[][] = []
  for (let i = 0; i < args.length; i++) {
    if (['--ro-bind', '--ro-bind-try', '--bind', '--symlink'].includes(args[i])) out.push(args.slice(i, (i += 2) + 1))
    else if (['--dev', '--proc', '--tmpfs'].includes(args[i])) out.push(args.slice(i, (i += 1) + 1))
  }
  return out
}

describe('sandbox policy -> bwrap argv', () => {
  it('system read-only, merged-/usr symlinks, masked files, then /dev, /proc, a private /tmp, worktree and HOME read-write', () => {
    expect(mounts(bwrapArgs(base))).toEqual([
      ['--ro-bind', '/usr', '/usr'],
      ['--symlink', 'usr/bin', '/bin'],
      ['--ro-bind', '/etc', '/etc'],
      ['--ro-bind', '/dev/null', '/etc/shadow'],
      ['--dev', '/dev'],
      ['--proc', '/proc'],
      ['--tmpfs', '/tmp'],
      ['--bind', '/state/homes/a1', '/state/homes/a1'],
      ['--bind', '/work/agents/a1', '/work/agents/a1'],
    ])
  })

  it('own PID and IPC namespaces, dies with its parent, no capabilities, network shared, starts in the worktree', () => {
    const args = bwrapArgs(base)
    for (const f of ['--unshare-pid', '--unshare-ipc', '--die-with-parent']) expect(args).toContain(f)
    expect(args.join(' ')).toContain('--cap-drop ALL')
    expect(args.join(' ')).toContain('--chdir /work/agents/a1')
    expect(args.some((a) => a.startsWith('--unshare-net') || a === '--unshare-all' || a === '--share-net')).toBe(false)
    expect(bwrapArgs({...base, workdir: undefined}).join(' ')).toContain('--chdir /state/homes/a1')
  })

  it('writable paths inside a readable one are mounted after it (shallowest first); a path both readable and writable is writable', () => {
    const args = bwrapArgs({...base, readable: ['/repo/.git', '/opt/svc', '/repo/.git/refs'], writable: ['/repo/.git/objects', '/repo/.git/refs', '/repo/.git/worktrees/a1']})
    expect(mounts(args).slice(7)).toEqual([
      ['--ro-bind-try', '/opt/svc', '/opt/svc'],
      ['--ro-bind-try', '/repo/.git', '/repo/.git'],
      ['--bind', '/repo/.git/objects', '/repo/.git/objects'],
      ['--bind', '/repo/.git/refs', '/repo/.git/refs'],
      ['--bind', '/state/homes/a1', '/state/homes/a1'],
      ['--bind', '/work/agents/a1', '/work/agents/a1'],
      ['--bind', '/repo/.git/worktrees/a1', '/repo/.git/worktrees/a1'],
    ])
  })

  it('an isolated network is its own namespace; a uid runs in a user namespace; overlays hide system files', () => {
    const args = bwrapArgs({...base, network: 'isolated', uid: 1000, overlays: [{source: '/state/sb/s/passwd', dest: '/etc/passwd'}]})
    expect(args).toContain('--unshare-net')
    expect(args.join(' ')).toContain('--unshare-user --uid 1000 --gid 1000')
    // Over /etc (a system path), before the agent's own paths.
    expect(mounts(args).slice(3, 5)).toEqual([
      ['--ro-bind', '/dev/null', '/etc/shadow'],
      ['--ro-bind', '/state/sb/s/passwd', '/etc/passwd'],
    ])
    expect(args.join(' ')).toContain('--cap-drop ALL')
    expect(bwrapArgs({...base, network: 'host'})).not.toContain('--unshare-net')
    expect(bwrapArgs(base)).not.toContain('--unshare-user')
    expect(() => bwrapArgs({...base, uid: 0})).toThrow(/uid 0 must be/)
  })

  it('refuses relative paths and ".."', () => {
    expect(() => bwrapArgs({...base, readable: ['relative']})).toThrow(/readable path "relative" must be an absolute path/)
    expect(() => bwrapArgs({...base, writable: ['/a/../root']})).toThrow(/writable path/)
  })
})

describe('sandbox environment', () => {
  const hostEnv = {PATH: '/usr/bin:/bin', LANG: 'en_GB.UTF-8', SECRET_OF_THE_HUB: 'x', HTTPS_PROXY: 'http://proxy', HOME: '/root', SVC_DEV_TOKEN: 'svc_dev_x'}

  it('only the basics, the passthrough names and the agent env; HOME and TMPDIR inside; svc first on PATH', () => {
    const env = sandboxEnv({hostEnv, passthrough: ['HTTPS_PROXY', 'NOT_SET'], agentEnv: {SVC_AGENT_ID: 'a1', SVC_AUTH_TOKEN: 'svc_agt_x', ANTHROPIC_API_KEY: 'k'}, home: '/state/homes/a1', binDir: '/state/bin'})
    expect(env).toEqual({
      PATH: '/state/bin:/usr/bin:/bin',
      LANG: 'en_GB.UTF-8',
      HTTPS_PROXY: 'http://proxy',
      SVC_AGENT_ID: 'a1',
      SVC_AUTH_TOKEN: 'svc_agt_x',
      ANTHROPIC_API_KEY: 'k',
      HOME: '/state/homes/a1',
      TMPDIR: '/tmp',
    })
  })

  it('the agent env may set PATH and LANG; it may not move HOME out of its own', () => {
    const env = sandboxEnv({hostEnv: {}, passthrough: [], agentEnv: {PATH: '/opt/x/bin', LANG: 'C', HOME: '/root'}, home: '/h'})
    expect(env).toEqual({PATH: '/opt/x/bin', LANG: 'C', HOME: '/h', TMPDIR: '/tmp'})
  })
})
