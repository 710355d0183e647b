import {execFileSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'
import {typedInto} from '../helpers/agent-shell.js'

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, {cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']}).trim()

/**
 * Attack classes 1, 2 and 4 of the isolation issue, each performed from inside a real `shell`
 * agent on the local runtime (bubblewrap), with a control proving the attack's setup works:
 * 1. a program named by the agent's git configuration (fsmonitor, pager, external diff, filter,
 *    hooks) or by a forged `.git` file must never run on the host when svc diffs or merges;
 * 2. rewriting its `.git` file and `commondir`, then restarting itself, must mount nothing new;
 * 4. the checkout's refs and objects, and another agent's branch, must not change.
 * One dialect: the attack is on the broker's host, not on the database.
 */
describe('attacks on the host through git, from inside a sandboxed agent', () => {
  let hub: LiveHub
  let checkout: string
  let projectId: string
  let mallory: any
  let victim: any
  let stateDir: string

  beforeAll(async () => {
    hub = await startLiveHub('sqlite')
    stateDir = hub.colocated!.broker.opts.stateDir
    checkout = mkdtempSync(join(tmpdir(), 'svc-attack-git-'))
    git(checkout, 'init', '-q', '-b', 'main')
    writeFileSync(join(checkout, 'README.md'), '# target\n')
    git(checkout, 'add', '.')
    git(checkout, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'first')
    projectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'attack-git', localPath: checkout}})).body.project.id
    const create = async (name: string) => (await hub.request('POST', '/api/v1/agents', {body: {name, projectId, harnessConfig: 'shell'}})).body.agent
    victim = await create('victim')
    mallory = await create('mallory')
    expect(mallory).toMatchObject({phase: 'running', sandbox: 'bubblewrap'})
    await waitFor(async () => (await hub.request('POST', `/api/v1/agents/${mallory.id}/keys`, {body: {keys: 'true\r'}})).status === 200, 20_000, 'the terminal')
  }, 120_000)
  afterAll(async () => {
    await hub?.dispose()
    if (checkout) rmSync(checkout, {recursive: true, force: true})
  })

  const logs = async (id: string) => String((await hub.request('GET', `/api/v1/agents/${id}/logs`)).body)
  const typed = (id: string, line: string, marker: string) => typedInto(hub, id, line, marker)
  const agentToken = async (id: string) => (await hub.services.agentTokens.mint((await hub.store.agents.get(id))!)).token
  /** Every ref, the packed refs and every object file of the checkout, with its bytes. */
  function checkoutFingerprint(): string {
    const objects: string[] = []
    const walk = (d: string) => {
      for (const e of readdirSync(d).sort()) {
        const p = join(d, e)
        if (statSync(p).isDirectory()) walk(p)
        else objects.push(`${p}=${readFileSync(p).toString('base64')}`)
      }
    }
    walk(join(checkout, '.git', 'objects'))
    walk(join(checkout, '.git', 'refs'))
    return [git(checkout, 'for-each-ref'), existsSync(join(checkout, '.git', 'packed-refs')) ? readFileSync(join(checkout, '.git', 'packed-refs'), 'utf8') : '', ...objects].join('\n')
  }

  it('class 1: programs the agent names in its git config, attributes, hooks or a forged .git never run on the host', async () => {
    // The sandbox's /tmp is its own: a marker in the host's /tmp can only be written by the host.
    const marker = join(tmpdir(), `svc-pwned-${randomBytes(6).toString('hex')}`)
    const ws = mallory.workspace.path
    const plant = [
      `printf '#!/bin/sh\\necho pwned >> ${marker}\\ncat\\n' > evil.sh && chmod +x evil.sh`,
      'git config core.fsmonitor "$PWD/evil.sh"',
      'git config core.pager "$PWD/evil.sh"',
      'git config diff.external "$PWD/evil.sh"',
      'git config filter.x.clean "$PWD/evil.sh" && git config filter.x.smudge "$PWD/evil.sh" && git config filter.x.required true',
      "printf '* filter=x diff=x\\n' > .gitattributes && git config diff.x.textconv \"$PWD/evil.sh\"",
      'mkdir -p hooks && cp evil.sh hooks/post-commit && cp evil.sh hooks/pre-commit && git config core.hooksPath "$PWD/hooks"',
      `echo "planted-rc=$?"`,
    ].join(' && ')
    expect(await typed(mallory.id, plant, 'planted-rc')).toBe('0')
    // Control: the planted configuration is live. A host git that trusted the agent's repository
    // (what svc did before) runs the agent's program at once.
    git(ws, 'status', '--porcelain')
    expect(existsSync(marker)).toBe(true)
    rmSync(marker)

    // The agent asks for its own diff with its own token; a person diffs and merges.
    const token = await agentToken(mallory.id)
    const own = await hub.request('GET', `/api/v1/agents/${mallory.id}/diff`, {token})
    expect(own.status, JSON.stringify(own.body)).toBe(200)
    expect(own.body.files.map((f: {path: string}) => f.path)).toEqual(expect.arrayContaining(['evil.sh', '.gitattributes']))
    expect((await hub.request('GET', `/api/v1/agents/${mallory.id}/diff?stat=true`)).status).toBe(200)
    const merged = await hub.request('POST', `/api/v1/agents/${mallory.id}/merge`, {body: {strategy: 'squash'}})
    expect(merged.status, JSON.stringify(merged.body)).toBe(200)
    expect(existsSync(marker)).toBe(false)

    // A forged .git: the work tree's .git file now names a repository the agent made, whose
    // config runs its program. svc never reads that file.
    const forge = [
      'git init -q forged && git -C forged config core.fsmonitor "$PWD/evil.sh" && git -C forged config core.hooksPath "$PWD/hooks"',
      'cp .git real-dotgit && echo "gitdir: $PWD/forged/.git" > .git',
      'echo "forged-rc=$?"',
    ].join(' && ')
    expect(await typed(mallory.id, forge, 'forged-rc')).toBe('0')
    expect((await hub.request('GET', `/api/v1/agents/${mallory.id}/diff`, {token})).status).toBe(200)
    expect((await hub.request('GET', `/api/v1/agents/${mallory.id}/diff`)).status).toBe(200)
    expect(existsSync(marker)).toBe(false)
    // The agent puts its repository back to plain (its hooks read the terminal, and the next tests type there).
    const undo = 'cp real-dotgit .git && git config --unset core.hooksPath && git config --unset core.fsmonitor && git config --unset core.pager && git config --unset diff.external && git config --remove-section filter.x && git config --remove-section diff.x && rm .gitattributes; echo "restored-rc=$?"'
    expect(await typed(mallory.id, undo, 'restored-rc')).toBe('0')
  }, 180_000)

  it('class 4: the checkout\'s refs and objects and another agent\'s branch do not change', async () => {
    const before = checkoutFingerprint()
    const victimRepo = join(stateDir, 'repos', `${victim.id}.git`)
    const victimTip = git(victim.workspace.path, 'rev-parse', 'refs/heads/svc/victim')
    const objectFile = git(checkout, 'rev-parse', 'HEAD').replace(/^(..)/, '$1/')
    const attempts = [
      `git -C ${checkout} update-ref refs/heads/main HEAD; echo "main-rc=$?"`,
      `git -C ${checkout} tag planted; echo "tag-rc=$?"`,
      `git -C ${checkout} branch -f svc/victim HEAD; echo "branch-rc=$?"`,
      `cp README.md ${join(checkout, '.git', 'objects', objectFile)}; echo "object-rc=$?"`,
      `echo evil > ${join(checkout, '.git', 'hooks', 'post-merge')}; echo "hook-rc=$?"`,
      `git --git-dir=${victimRepo} update-ref refs/heads/svc/victim HEAD; echo "victim-rc=$?"`,
      `ls ${victim.workspace.path}; echo "victimws-rc=$?"`,
    ]
    for (const line of attempts) {
      const m = /echo "(\w+)-rc/.exec(line)![1]
      expect(await typed(mallory.id, line, `${m}-rc`), line).not.toBe('0')
    }
    // Control: its own repository is the agent's to write.
    expect(await typed(mallory.id, 'echo mine > mine.txt && git add mine.txt && git -c user.name=m -c user.email=m@example.com commit --no-verify -qm mine </dev/null; echo "own-rc=$?"', 'own-rc')).toBe('0')
    expect(checkoutFingerprint()).toBe(before)
    expect(git(victim.workspace.path, 'rev-parse', 'refs/heads/svc/victim')).toBe(victimTip)
  }, 180_000)

  it('class 2: a rewritten .git file and commondir, then a restart with its own token, mount nothing new', async () => {
    const hubSvc = join(hub.home, '.svc')
    expect(existsSync(join(hubSvc, 'dev-token'))).toBe(true)
    const gitDir = join(stateDir, 'repos', `${mallory.id}.git`)
    // And its token file a link to a Hub file: the restart writes the new token, never through it.
    const victim = join(hubSvc, 'victim.txt')
    writeFileSync(victim, 'a file of the Hub\n')
    const widen = [`echo "gitdir: ${hubSvc}" > .git`, `echo "${hubSvc}" > ${gitDir}/commondir`, `ln -sf ${victim} "$HOME/.svc/agent-token"`, 'echo "widen-rc=$?"'].join('; ')
    expect(await typed(mallory.id, widen, 'widen-rc')).toBe('0')
    const token = await agentToken(mallory.id)
    const restarted = await hub.request('POST', `/api/v1/agents/${mallory.id}/restart`, {token, body: {}})
    expect(restarted.status, JSON.stringify(restarted.body)).toBe(200)
    await waitFor(async () => (await hub.request('POST', `/api/v1/agents/${mallory.id}/keys`, {body: {keys: 'true\r'}})).status === 200, 60_000, 'the restarted terminal')
    expect(await typed(mallory.id, `cat ${join(hubSvc, 'dev-token')} >/dev/null; echo "token-rc=$?"`, 'token-rc')).not.toBe('0')
    // The broker's state directory lies under it here, so the directory itself may show as the
    // empty parent of the agent's own mounts: none of the Hub's files is in it.
    expect(await typed(mallory.id, `echo "hubfiles=$(ls -A ${hubSvc} 2>/dev/null | grep -c -e dev-token -e hub.db -e secrets)"`, 'hubfiles')).toBe('0')
    expect(await logs(mallory.id)).not.toContain(readFileSync(join(hubSvc, 'dev-token'), 'utf8').trim())
    expect(readFileSync(victim, 'utf8')).toBe('a file of the Hub\n')
    // svc's own reads refuse the planted commondir's effect: the diff still reads the agent's objects only.
    expect((await hub.request('GET', `/api/v1/agents/${mallory.id}/diff`)).status).toBe(200)
  }, 180_000)
})
