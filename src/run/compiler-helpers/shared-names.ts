// Three helper names exist in both esbuild's runtime and tslib with different
// contracts, so the source decides whose helper a name means. The evidence is
// what each compiler writes next to the call (checked against real output):
//   __await, __asyncGenerator: esbuild marks an await with `new __await(x)`,
//     tsc with a plain call `__await(x)` (tsc's generator yields one for every
//     `yield` and `await`; one with neither behaves alike under both helpers).
//   __runInitializers: tsc's class decorators always come with `__esDecorate`,
//     esbuild's with `__decoratorStart` / `__decorateElement` instead.

const TSLIB_EVIDENCE: Readonly<Record<string, RegExp>> = {
  __await: /(?<!\bnew\s*)(?<![\w$])__await\d*\s*\(/,
  __asyncGenerator: /(?<!\bnew\s*)(?<![\w$])__await\d*\s*\(/,
  __runInitializers: /(?<![\w$])__esDecorate\d*\s*\(/,
};

/** The names esbuild and tslib share (a test keeps this equal to the real overlap). */
export const SHARED_NAMES: readonly string[] = Object.keys(TSLIB_EVIDENCE);

/** Whether `name`, which both toolchains define, is tslib's in this source. */
export function isTslibsHere(name: string, source: string): boolean {
  return TSLIB_EVIDENCE[name]!.test(source);
}
