import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A slow, shared 2-core CI machine: no test may depend on wall-clock speed.
    testTimeout: 30_000,
    pool: 'threads',
    reporters: ['default', './test/plain-summary-reporter.ts'],
  },
})
