import {chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {baseImageTag} from '../../src/broker/images/base-recipe.js'
import {buildBaseImage} from '../../src/broker/images/build-base.js'
import {projectImageTag} from '../../src/broker/images/project-image.js'
import {runCommand} from '../../src/broker/runtimes/run-command.js'
import {findExecutable} from '../../src/broker/sandbox/host.js'
import {iso} from '../../src/domain/shared/clock.js'
import {cliEnv, runCli} from '../helpers/cli.js'
import {makeRepos, sh, type TestRepos} from '../helpers/git-repos.js'
import {startLiveHub, type LiveHub} from '../helpers/live-hub.js'

/**
 * Environments on real podman (docs/environments.md): the project's committed
 * `.svc/Containerfile` is built FROM the base image once and is the image of the project's new
 * agents; the committed `.svc/setup` runs inside that container, before the harness, and sees
 * the image's files and the copied `.env`; a Containerfile that does not build fails the create
 * with the build's last lines. Kept to two creates: podman is slow here.
 */
const podman = findExecutable('podman', `${process.env.PATH}:/usr/sbin:/sbin`)
const inCi = process.env.CI === 'true'
if (!podman && !inCi) console.warn('environment-podman.test.ts: SKIPPED: podman is not installed here (Debian: apt-get install podman runc debootstrap)')

const CONTAINERFILE = 'ARG SVC_BASE\nFROM ${SVC_BASE}\nRUN echo from-the-project-image > /etc/svc-project-marker\n'

describe.skipIf(!podman)('project images and setup on podman', {timeout: 900_000}, () => {
  let hub: LiveHub
  let repos: TestRepos
  const made: string[] = []
  const cliHome = mkdtempSync(join(tmpdir(), 'svc-env-podman-cli-'))
  const create = (name: string) => hub.request('POST', '/api/v1/agents', {body: {name, projectId: 'default', harnessConfig: 'shell'}})

  beforeAll(async () => {
    await buildBaseImage({engine: 'podman', progress: (l) => console.error(`[environment-podman] ${l}`)})
    hub = await startLiveHub('sqlite', {env: {SVC_SERVER_BROKER_RUNTIME: 'podman', CONTAINER_HOST: undefined, DOCKER_HOST: undefined} as unknown as Record<string, string>})
    repos = makeRepos()
    const c = repos.checkout
    mkdirSync(join(c, '.svc'), {recursive: true})
    writeFileSync(join(c, '.svc/Containerfile'), CONTAINERFILE)
    writeFileSync(join(c, '.svc/setup'), '#!/bin/sh\nset -e\ncat /etc/svc-project-marker > setup-saw.txt\ncat .env >> setup-saw.txt\necho "agent $SVC_AGENT_ID" >> setup-saw.txt\n')
    chmodSync(join(c, '.svc/setup'), 0o755)
    writeFileSync(join(c, '.gitignore'), '*.log\n.env\n')
    sh(c, 'add', '-A')
    sh(c, 'commit', '-q', '-m', 'project environment')
    writeFileSync(join(c, '.env'), 'FROM_DOTENV=yes\n')
    writeFileSync(join(c, '.svc/settings.yaml'), 'schema_version: "1"\nworkspace:\n  copy: [".env"]\n')
    await hub.store.projects.update((await hub.request('GET', '/api/v1/projects/default')).body.project.id, {localPath: c}, iso(new Date()))
    // A fresh build of this test's Containerfile: an image left by an earlier run would hide the build.
    await runCommand('podman', ['rmi', '-f', projectImageTag(CONTAINERFILE)])
  }, 900_000)

  afterAll(async () => {
    for (const id of made) await runCommand('podman', ['rm', '-f', `svc-${id}`]).catch(() => {})
    await hub?.dispose()
    repos?.dispose()
    rmSync(cliHome, {recursive: true, force: true})
  })

  it('a new agent runs the image built from .svc/Containerfile, and its .svc/setup ran in that container with the copied .env', async () => {
    const r = await create('imaged')
    made.push(r.body.agent?.id)
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    expect(r.body.agent, r.body.agent.error).toMatchObject({phase: 'running', runtime: 'podman', image: projectImageTag(CONTAINERFILE), sandbox: 'container'})
    const wd = r.body.agent.workspace.path
    expect(readFileSync(join(wd, 'setup-saw.txt'), 'utf8')).toBe(`from-the-project-image\nFROM_DOTENV=yes\nagent ${r.body.agent.id}\n`)
    const inspect = await runCommand('podman', ['inspect', '--format', '{{.ImageName}}', `svc-${r.body.agent.id}`])
    expect(inspect.stdout.toString().trim()).toBe(projectImageTag(CONTAINERFILE))
    expect(projectImageTag(CONTAINERFILE)).not.toBe(baseImageTag())
    // Built once: svc image build --project finds it (from the checkout's HEAD) and builds nothing.
    const cli = await runCli(['image', 'build', '--project', 'default', '--json'], {env: cliEnv(cliHome, {SVC_HUB_ENDPOINT: hub.url, SVC_DEV_TOKEN: hub.devToken}), timeoutMs: 120_000})
    expect(cli.code, cli.stdout + cli.stderr).toBe(0)
    expect(cli.json).toMatchObject({image: projectImageTag(CONTAINERFILE), engine: 'podman', built: false})
  })

  it('a Containerfile that does not build: the agent is in phase error with the build\'s last lines, nothing left behind', async () => {
    sh(repos.checkout, 'checkout', '-q', '-b', 'broken-image')
    writeFileSync(join(repos.checkout, '.svc/Containerfile'), 'ARG SVC_BASE\nFROM ${SVC_BASE}\nRUN echo "the-build-breaks-here" && exit 4\n')
    sh(repos.checkout, 'commit', '-q', '-am', 'broken image')
    try {
      const r = await create('unbuilt')
      made.push(r.body.agent?.id)
      expect(r.status, JSON.stringify(r.body)).toBe(201)
      expect(r.body.agent).toMatchObject({phase: 'error'})
      expect(r.body.agent.error).toMatch(/^building the project image from \.svc\/Containerfile failed \(exit code \d+\); its last lines:\n[\s\S]*the-build-breaks-here/)
      expect(sh(repos.checkout, 'branch', '--list', 'svc/unbuilt')).toBe('')
      expect((await runCommand('podman', ['container', 'exists', `svc-${r.body.agent.id}`])).code).not.toBe(0)
    } finally {
      sh(repos.checkout, 'checkout', '-q', 'main')
    }
  })
})
