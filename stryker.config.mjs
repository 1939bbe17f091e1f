// Stryker's settings for `npm run mutate`; scripts/mutate.mjs runs it with
// the folders to mutate and in a throwaway network namespace (see there).
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts' },
  // Only the tests that reach a mutant run for it.
  coverageAnalysis: 'perTest',
  // The machine is shared and the root tests are heavy: at most two runners.
  concurrency: 2,
  // Root tests make namespaces and wait on the kernel: a slow test is not a
  // hung mutant, so the allowance over the dry run's time is generous.
  timeoutMS: 30_000,
  timeoutFactor: 2,
  // The dry run is the whole covering suite in one runner, root tests included.
  dryRunTimeoutMinutes: 45,
  // Tests type-check in `npm run typecheck`; a mutant that does not compile
  // still runs (vite strips types), which is what perTest runs measure.
  checkers: [],
  // A mutant of module-level code (a constant, a table) runs every test
  // again: half of src/core's mutants and 97% of the time measured. They are
  // reported as ignored, not killed (docs/maintainers.md).
  ignoreStatic: true,
  // Nor does it add // @ts-nocheck to files: vite ignores types anyway, and
  // the README test compares the examples' text byte for byte.
  disableTypeChecks: false,
  ignorePatterns: ['build-asan', 'api-docs'],
  reporters: ['clear-text', 'progress', 'json', 'html'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
};
