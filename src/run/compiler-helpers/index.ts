// Compiler helpers inside fn's source text: supplying the ones that can be
// (esbuild's runtime, tslib), explaining the names that cannot.
export { helperBindings, type HelperBindings } from './bindings.js';
export { explainToolchainName } from './explain.js';
