import {defineConfig} from 'vitest/config'
import {LongestFirstSequencer} from './test/helpers/sequencer.js'

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'commands/**/*.test.ts', 'test/**/*.test.ts'],
    // Fixture recorders run only when asked (SVC_RECORD_FIXTURES=1 npx vitest run test/e2e/record-*.test.ts):
    // they are not tests, so the suite neither runs nor skips them.
    exclude: ['**/node_modules/**', ...(process.env.SVC_RECORD_FIXTURES ? [] : ['test/e2e/record-*.test.ts'])],
    testTimeout: 30_000,
    // expect.poll waits for what a test checks; its default (1 s) is a timed test on a loaded
    // machine (a browser terminal's connect took longer under CI's load). The test's own
    // timeout still bounds it.
    expect: {poll: {timeout: 20_000}},
    hookTimeout: 60_000,
    // Two cores here, and most tests wait (harnesses, tmux, HTTP, PostgreSQL) rather than compute:
    // a full run used under one core on average with three forks, and 1.24 of the two with four
    // (a clean clone's .ci/run, 2026-11-27); five keep them busier without starving PostgreSQL
    // and tmux tests.
    pool: 'forks',
    maxWorkers: 5,
    // Each worker keeps its modules from one test file to the next. Isolated, every file of the
    // Hub loaded its whole graph again (hundreds of modules through vite's runner): a clean
    // clone's run spent 1654 s of its 7900 worker-seconds importing (2026-11-28); test/integration
    // alone took 729 s isolated and 347 s not, on the same loaded machine. Tests keep no state
    // in modules: each makes its own Hub, store, HOME and tmux socket and disposes of them.
    isolate: false,
    globalSetup: ['test/helpers/global-setup.ts'],
    sequence: {sequencer: LongestFirstSequencer},
    // Every run records each file's whole duration (test-output/file-durations.json) for the sequencer.
    reporters: ['default', './test/helpers/file-durations-reporter.ts'],
  },
})
