import {chmod, mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {ContainerCliRuntime} from './container-cli.js'
import {KubernetesRuntime} from './kubernetes.js'
import {LocalTmuxRuntime} from './local-tmux.js'
import {chooseDefaultRuntime, readStoredDefault} from './default-runtime.js'
import {createRuntime, defaultRuntime, mergeEnv, runtimeNamed, runtimeNames, selectRuntime} from './select.js'

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-select-'))
  // Stand-in engines: one answers the probe, one is a CLI with nothing behind it.
  await writeFile(join(dir, 'engine'), '#!/bin/sh\necho 27.0\n')
  await writeFile(join(dir, 'no-engine'), '#!/bin/sh\necho "Cannot connect" >&2\nexit 1\n')
  await chmod(join(dir, 'engine'), 0o755)
  await chmod(join(dir, 'no-engine'), 0o755)
})
afterAll(() => rm(dir, {recursive: true, force: true}))

describe('runtime selection', () => {
  // Every probe here runs stand-in engines: the suite must not depend on what this machine has.
  it('the probe prefers docker, then podman, when their engines answer, else local', async () => {
    const d = await defaultRuntime({stateDir: dir, bins: {docker: join(dir, 'engine'), podman: join(dir, 'engine')}})
    expect(d.type).toBe('docker')
    const p = await defaultRuntime({stateDir: dir, bins: {docker: join(dir, 'no-engine'), podman: join(dir, 'engine')}})
    expect(p.type).toBe('podman')
    const l = await defaultRuntime({stateDir: dir, bins: {docker: join(dir, 'no-engine'), podman: join(dir, 'no-engine')}})
    expect(l.type).toBe('local')
    expect(l).toBeInstanceOf(LocalTmuxRuntime)
  })

  it('the default is chosen once: an engine that starts answering later changes nothing; a setting wins without rewriting it', async () => {
    const state = join(dir, 'broker-once')
    const probe = (engine: string) => async () => (await defaultRuntime({stateDir: dir, bins: {docker: join(dir, 'no-engine'), podman: join(dir, engine)}})).type
    const first = await chooseDefaultRuntime(state, {known: runtimeNames({}), detect: probe('no-engine')})
    expect(first).toMatchObject({runtime: 'local', source: 'detected'})
    expect(readStoredDefault(state)).toMatchObject({runtime: 'local', how: 'detected'})
    // podman installed since: the stored choice stands.
    const again = await chooseDefaultRuntime(state, {known: runtimeNames({}), detect: probe('engine')})
    expect(again).toEqual({runtime: 'local', source: 'stored', chosenAt: first.chosenAt})
    const pinned = await chooseDefaultRuntime(state, {pinned: 'podman', known: runtimeNames({}), detect: probe('engine')})
    expect(pinned).toEqual({runtime: 'podman', source: 'setting'})
    expect(readStoredDefault(state)?.runtime).toBe('local')
    await expect(chooseDefaultRuntime(state, {pinned: 'vm', known: runtimeNames({}), detect: probe('engine')})).rejects.toThrow(/default runtime "vm" is not a runtime type or a name in settings `runtimes`/)
    // A `runtimes` name is a valid default too, and selection uses its entry.
    const settings = {runtimes: {sandboxless: {type: 'local', sandbox: 'none'}}}
    expect(await chooseDefaultRuntime(state, {pinned: 'sandboxless', known: runtimeNames(settings), detect: probe('engine')})).toMatchObject({runtime: 'sandboxless'})
    const sel = await selectRuntime(settings, {stateDir: dir, defaultRuntime: 'sandboxless'})
    expect(sel).toMatchObject({runtimeName: 'sandboxless', settings: {type: 'local', sandbox: 'none'}})
    expect(sel.runtime.type).toBe('local')
  })

  it('a runtime by name: a `runtimes` entry, else a bare type; the default type picks up an entry of its own name', () => {
    const settings = {runtimes: {local: {type: 'local', env_passthrough: ['LANG']}, dock: {type: 'docker', image: 'img:1'}}}
    expect(runtimeNamed(settings, 'local', {stateDir: dir}).settings).toEqual({type: 'local', env_passthrough: ['LANG']})
    expect(runtimeNamed(settings, 'podman', {stateDir: dir})).toMatchObject({runtimeName: 'podman', settings: {type: 'podman'}})
    expect(runtimeNamed(settings, 'dock', {stateDir: dir}).runtime.type).toBe('docker')
    expect(() => runtimeNamed(settings, 'nowhere', {stateDir: dir})).toThrow(/runtime "nowhere" is not defined in settings `runtimes`/)
    expect(() => runtimeNamed({runtimes: {x: {type: 'local', sandbox: 'maybe'}}}, 'x', {stateDir: dir})).toThrow(/`sandbox` must be bubblewrap or none/)
    expect(() => runtimeNamed({runtimes: {x: {type: 'local', env_passthrough: ['A B']}}}, 'x', {stateDir: dir})).toThrow(/`env_passthrough` must be a list/)
  })

  it('local agents yield the CPU by default (nice 10); `nice` 0-19 sets it, anything else is refused', () => {
    const niceOf = (cfg: object) => (runtimeNamed({runtimes: {x: {type: 'local', ...cfg}}}, 'x', {stateDir: dir}).runtime as unknown as {opts: {nice?: number}}).opts.nice
    expect(niceOf({})).toBe(10)
    expect(niceOf({nice: 0})).toBe(0)
    expect(niceOf({nice: 19})).toBe(19)
    for (const bad of [20, -1, 2.5, '5']) expect(() => niceOf({nice: bad})).toThrow(/runtime "x": `nice` must be a whole number from 0 to 19/)
  })

  it('profiles name runtimes; env merges runtime then profile', async () => {
    const settings = {
      active_profile: 'cluster',
      runtimes: {k8s: {type: 'kubernetes', context: 'prod', namespace: 'agents', env: {A: 'runtime', B: 'runtime'}}, dock: {type: 'docker', host: 'tcp://h:2375'}},
      profiles: {cluster: {runtime: 'k8s', env: {B: 'profile'}}, dev: {runtime: 'dock'}, bare: {runtime: 'local'}, broken: {runtime: 'nowhere'}},
    }
    const k = await selectRuntime(settings, {stateDir: dir})
    expect(k.runtime).toBeInstanceOf(KubernetesRuntime)
    expect(k).toMatchObject({runtimeName: 'k8s', profileName: 'cluster', env: {A: 'runtime', B: 'profile'}})
    const d = await selectRuntime(settings, {stateDir: dir}, 'dev')
    expect(d.runtime).toBeInstanceOf(ContainerCliRuntime)
    expect(d.runtime.type).toBe('docker')
    expect((await selectRuntime(settings, {stateDir: dir}, 'bare')).runtime.type).toBe('local')
    await expect(selectRuntime(settings, {stateDir: dir}, 'broken')).rejects.toThrow('profile "broken" names runtime "nowhere", which is not defined in settings `runtimes`')
    await expect(selectRuntime(settings, {stateDir: dir}, 'ghost')).rejects.toThrow(/profile "ghost" is not defined/)
    expect((await selectRuntime({}, {stateDir: dir, defaultRuntime: 'local'})).runtime.type).toBe('local')
  })

  it('unknown and unsupported types are clear errors', () => {
    expect(() => createRuntime('x', {type: 'container'}, {stateDir: dir})).toThrow(/type `container` is not supported/)
    expect(() => createRuntime('x', {type: 'vm'}, {stateDir: dir})).toThrow(/unknown type "vm"/)
    expect(mergeEnv({A: '1'}, undefined, {A: '2', B: '3'})).toEqual({A: '2', B: '3'})
  })
})
