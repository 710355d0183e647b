import {chmod, mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {ContainerCliRuntime} from './container-cli.js'
import {KubernetesRuntime} from './kubernetes.js'
import {LocalTmuxRuntime} from './local-tmux.js'
import {createRuntime, defaultRuntime, mergeEnv, selectRuntime} from './select.js'

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
  it('the workstation default on this machine: docker CLI without engine, no podman → local', async () => {
    const rt = await defaultRuntime({stateDir: dir})
    expect(rt).toBeInstanceOf(LocalTmuxRuntime)
    expect(rt.type).toBe('local')
  })

  it('prefers docker, then podman, when their engines answer', async () => {
    const d = await defaultRuntime({stateDir: dir, bins: {docker: join(dir, 'engine'), podman: join(dir, 'engine')}})
    expect(d.type).toBe('docker')
    const p = await defaultRuntime({stateDir: dir, bins: {docker: join(dir, 'no-engine'), podman: join(dir, 'engine')}})
    expect(p.type).toBe('podman')
    const l = await defaultRuntime({stateDir: dir, bins: {docker: join(dir, 'no-engine'), podman: join(dir, 'no-engine')}})
    expect(l.type).toBe('local')
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
    expect((await selectRuntime({}, {stateDir: dir})).runtime.type).toBe('local')
  })

  it('unknown and unsupported types are clear errors', () => {
    expect(() => createRuntime('x', {type: 'container'}, {stateDir: dir})).toThrow(/type `container` is not supported/)
    expect(() => createRuntime('x', {type: 'vm'}, {stateDir: dir})).toThrow(/unknown type "vm"/)
    expect(mergeEnv({A: '1'}, undefined, {A: '2', B: '3'})).toEqual({A: '2', B: '3'})
  })
})
