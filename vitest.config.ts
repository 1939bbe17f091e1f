import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Native code and namespace work: one process per file, so a crash or a
    // leaked thread stays with the file that caused it.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
