import {defineConfig} from 'vitest/config'

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'commands/**/*.test.ts', 'test/**/*.test.ts'],
    // Fixture recorders run only when asked (SVC_RECORD_FIXTURES=1 npx vitest run test/e2e/record-*.test.ts):
    // they are not tests, so the suite neither runs nor skips them.
    exclude: ['**/node_modules/**', ...(process.env.SVC_RECORD_FIXTURES ? [] : ['test/e2e/record-*.test.ts'])],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores here: a few forks keep PostgreSQL and tmux tests from starving each other.
    pool: 'forks',
    maxWorkers: 3,
    globalSetup: ['test/helpers/global-setup.ts'],
  },
})
