import {mkdtempSync, realpathSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, describe, expect, it} from 'vitest'
import {launchAgent} from './agent-launch.js'
import {writeTemplateFiles} from './broker.js'
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
