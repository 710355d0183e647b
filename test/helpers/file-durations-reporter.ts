import {mkdirSync, writeFileSync} from 'node:fs'
import {relative} from 'node:path'
import type {Reporter, TestModule, Vitest} from 'vitest/node'

/**
 * Records how long each test file held its worker, whole: the environment, the import of the
 * file and all it imports (a Hub's module graph is seconds of it under load), its hooks (a Hub
 * started in beforeAll, the single executable built in binary-smoke's) and its tests. The JSON
 * reporter's start and end times cover only the tests, so a file whose cost is in its setup
 * looked short and the sequencer started it last. Writes test-output/file-durations.json, which
 * scripts/test-durations.mjs turns into test/durations.json.
 */
export default class FileDurationsReporter implements Reporter {
  private root = ''
  private seconds: Record<string, number> = {}

  onInit(vitest: Vitest): void {
    this.root = vitest.config.root
  }

  onTestModuleEnd(module: TestModule): void {
    const d = module.diagnostic()
    const ms = d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration
    this.seconds[relative(this.root, module.moduleId)] = Math.round(ms / 100) / 10
  }

  onTestRunEnd(): void {
    mkdirSync(`${this.root}/test-output`, {recursive: true})
    writeFileSync(`${this.root}/test-output/file-durations.json`, `${JSON.stringify(this.seconds, null, 2)}\n`)
  }
}
