import {defineConfig} from 'vitest/config'

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'commands/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores here: a few forks keep PostgreSQL and tmux tests from starving each other.
    pool: 'forks',
    maxWorkers: 3,
    globalSetup: ['test/helpers/global-setup.ts'],
  },
})
