// This package's version, compiled in: a bundle that includes netns has no
// package.json to read it from (test/unit/version.test.ts keeps it in step).
export const VERSION = '0.1.0';
