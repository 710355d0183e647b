import {existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, describe, expect, it} from 'vitest'
import {commitFile, makeRepos, sh} from '../../test/helpers/git-repos.js'
import {launchAgent} from './agent-launch.js'
import {writeTemplateFiles} from './template-files.js'
import {agentRepoPaths, createWorkspace} from './workspace/repository.js'
import type {AgentSpec, Runtime} from './runtime.js'

const BIN = fileURLToPath(new URL('../../node_modules/.bin', import.meta.url))

/**
 * A container runtime that records what it is asked to start and starts nothing: this test is
 * about the spec the broker builds (the real podman start is test/integration/podman-*.test.ts).
 */
function recordingRuntime(): Runtime & {started: AgentSpec[]} {
  const started: AgentSpec[] = []
  const no = () => Promise.reject(new Error('not started'))
  return {
    type: 'podman',
    started,
    available: async () => true,
    start: async (spec) => (started.push(spec), {runtime: 'podman', ref: `svc-${spec.agentId}`, sandbox: 'container'}),
    stop: async () => {},
    isRunning: async () => true,
    logs: () => ({[Symbol.asyncIterator]: () => ({next: no})}),
    attach: no,
    terminalReady: async () => true,
    sendKeys: async () => {},
    paste: async () => {},
  }
}

describe("the destinations an isolated sandbox lets an agent reach", () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-launch-egress-'))
  afterAll(() => rmSync(dir, {recursive: true, force: true}))

  it("come from the harness config and the Hub, never from the agent's secrets (an agent can write project secrets)", async () => {
    const runtime = recordingRuntime()
    const env = {PATH: `${BIN}:/usr/bin:/bin`, ANTHROPIC_API_KEY: 'k'}
    await launchAgent(
      {agentId: 'e1', name: 'c', projectId: 'p', harnessConfig: 'claude', harness: {harness: 'claude', env: {ANTHROPIC_BASE_URL: 'http://127.0.0.1:4010'}}, env: {SVC_AUTH_TOKEN: 't', EVIL_BASE_URL: 'http://127.0.0.1:5432'}, task: 'hi'},
      {stateDir: dir, hubUrl: 'http://127.0.0.1:9', runtime, runtimeEnv: env, writeTemplateFiles},
    )
    const [spec] = runtime.started
    expect(spec!.env.EVIL_BASE_URL).toBe('http://127.0.0.1:5432')
    expect(spec!.egressEnv).toMatchObject({ANTHROPIC_BASE_URL: 'http://127.0.0.1:4010', SVC_HUB_ENDPOINT: 'http://127.0.0.1:9'})
    expect(spec!.egressEnv!.EVIL_BASE_URL).toBeUndefined()
  })
})

describe('launching a harness that is a Node script in a container', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-launch-'))
  afterAll(() => rmSync(dir, {recursive: true, force: true}))

  it('runs npm\'s launcher of Gemini CLI with the broker\'s own node, mounted where it is (the image need not have node)', async () => {
    const runtime = recordingRuntime()
    const env = {PATH: `${BIN}:${dirname(process.execPath)}:/usr/bin:/bin`, GEMINI_API_KEY: 'k'}
    await launchAgent({agentId: 'a1', name: 'g', projectId: 'p', harnessConfig: 'gemini', env: {SVC_AUTH_TOKEN: 't'}, task: 'hi'}, {stateDir: dir, hubUrl: 'http://127.0.0.1:9', runtime, runtimeEnv: env, writeTemplateFiles})
    const [spec] = runtime.started
    const node = realpathSync(process.execPath)
    expect(spec!.command.slice(0, 2)).toEqual([node, join(BIN, 'gemini')])
    expect(spec!.readablePaths).toContain(node)
    // The npm installation the script belongs to is mounted too.
    expect(spec!.readablePaths).toContain(fileURLToPath(new URL('../../node_modules', import.meta.url)).replace(/\/$/, ''))
  })

  it('leaves a harness config\'s own image to run its own CLI', async () => {
    const runtime = recordingRuntime()
    const env = {PATH: `${BIN}:${dirname(process.execPath)}:/usr/bin:/bin`, GEMINI_API_KEY: 'k'}
    await launchAgent({agentId: 'a3', name: 'i', projectId: 'p', harnessConfig: 'gemini', harness: {harness: 'gemini', image: 'registry.example/gemini:1'}, env: {SVC_AUTH_TOKEN: 't'}, task: 'hi'}, {stateDir: dir, hubUrl: 'http://127.0.0.1:9', runtime, runtimeEnv: env, writeTemplateFiles})
    const [spec] = runtime.started
    expect(spec!.image).toBe('registry.example/gemini:1')
    expect(spec!.command[0]).toBe('gemini')
  })

  it('runs a native harness (Claude Code) as it is', async () => {
    const runtime = recordingRuntime()
    const env = {PATH: `${BIN}:/usr/bin:/bin`, ANTHROPIC_API_KEY: 'k'}
    await launchAgent({agentId: 'a2', name: 'c', projectId: 'p', harnessConfig: 'claude', env: {SVC_AUTH_TOKEN: 't'}, task: 'hi'}, {stateDir: dir, hubUrl: 'http://127.0.0.1:9', runtime, runtimeEnv: env, writeTemplateFiles})
    expect(runtime.started[0]!.command[0]).toBe(join(BIN, 'claude'))
  })
})

describe('a workspace left by a start the Hub never recorded', () => {
  it('is removed as any workspace is: a clone\'s unpushed commits are kept, then a fresh clone starts', async () => {
    const repos = makeRepos()
    const stateDir = mkdtempSync(join(tmpdir(), 'svc-launch-left-'))
    try {
      // What a start the Hub gave up on left behind: a clone with work of its own.
      const left = (await createWorkspace({gitRemote: repos.remote, branch: 'svc/left'}, agentRepoPaths(stateDir, 'a4')))!.path
      const work = commitFile(left, 'left.txt', 'made before the Hub gave up\n')
      const runtime = recordingRuntime()
      const launched = await launchAgent({agentId: 'a4', name: 'left', projectId: 'p', harnessConfig: 'shell', env: {SVC_AUTH_TOKEN: 't'}, workspace: {gitRemote: repos.remote, branch: 'svc/left'}}, {stateDir, hubUrl: 'http://127.0.0.1:9', runtime, writeTemplateFiles})
      expect(sh(join(stateDir, 'kept-branches', 'a4.git'), 'rev-parse', 'refs/heads/svc/left')).toBe(work)
      expect(launched.workspace).toMatchObject({branch: 'svc/left', baseRef: 'main', baseCommit: sh(repos.remote, 'rev-parse', 'main')})
      expect(existsSync(join(launched.workspace!.path, 'left.txt'))).toBe(false)
    } finally {
      repos.dispose()
      rmSync(stateDir, {recursive: true, force: true})
    }
  })
})

describe("a new agent's HOME, written while its repository is made", () => {
  it("names the work tree's real path in the harness config, and goes when the workspace is refused", async () => {
    const repos = makeRepos()
    const stateDir = mkdtempSync(join(tmpdir(), 'svc-launch-home-'))
    try {
      const runtime = recordingRuntime()
      const env = {PATH: `${BIN}:/usr/bin:/bin`, ANTHROPIC_API_KEY: 'k'}
      const deps = {stateDir, hubUrl: 'http://127.0.0.1:9', runtime, runtimeEnv: env, writeTemplateFiles}
      const launched = await launchAgent({agentId: 'h1', name: 'h1', projectId: 'p', harnessConfig: 'claude', env: {SVC_AUTH_TOKEN: 't'}, task: 'hi', workspace: {checkout: repos.checkout, branch: 'svc/h1'}}, deps)
      const home = runtime.started[0]!.home!
      const config = JSON.parse(readFileSync(join(home, '.claude.json'), 'utf8')) as {projects: Record<string, unknown>}
      expect(Object.keys(config.projects)).toContain(launched.workspace!.path)
      expect(readFileSync(join(home, '.svc', 'agent-token'), 'utf8')).toBe('t\n')
      // Refused (uncommitted changes in the checkout): nothing of the agent's is left, its HOME included.
      writeFileSync(join(repos.checkout, 'README.md'), 'changed\n')
      const refused = launchAgent({agentId: 'h2', name: 'h2', projectId: 'p', harnessConfig: 'claude', env: {SVC_AUTH_TOKEN: 't'}, task: 'hi', workspace: {checkout: repos.checkout, branch: 'svc/h2'}}, deps)
      await expect(refused).rejects.toMatchObject({code: 'checkout_dirty'})
      for (const p of ['homes/h2', 'workspaces/h2', 'repos/h2.git']) expect(existsSync(join(stateDir, p)), p).toBe(false)
    } finally {
      repos.dispose()
      rmSync(stateDir, {recursive: true, force: true})
    }
  })
})
