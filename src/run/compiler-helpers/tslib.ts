// tsc's helpers are tslib's exports: tsc either inlines a copy of one into the
// module (then fn's body calls it by its bare name) or, with importHelpers,
// calls it through the tslib namespace (`tslib_1.__awaiter` in CommonJS).
// The real package supplies them, imported statically so that the
// self-contained worker (scripts/build-worker.mjs) carries it too.
import * as tslibExports from 'tslib';

/** Every export of tslib 2.9 (a test checks this against the installed package). */
export const TSLIB_NAMES: ReadonlySet<string> = new Set([
  '__extends',
  '__assign',
  '__rest',
  '__decorate',
  '__param',
  '__esDecorate',
  '__runInitializers',
  '__propKey',
  '__setFunctionName',
  '__metadata',
  '__awaiter',
  '__generator',
  '__exportStar',
  '__createBinding',
  '__values',
  '__read',
  '__spread',
  '__spreadArrays',
  '__spreadArray',
  '__await',
  '__asyncGenerator',
  '__asyncDelegator',
  '__asyncValues',
  '__makeTemplateObject',
  '__importStar',
  '__importDefault',
  '__classPrivateFieldGet',
  '__classPrivateFieldSet',
  '__classPrivateFieldIn',
  '__addDisposableResource',
  '__disposeResources',
  '__rewriteRelativeImportExtension',
]);

/** tsc's name for the namespace of `import ... from "tslib"` in CommonJS output. */
export const TSLIB_NAMESPACE = /^tslib_\d+$/;

export const tslib: Readonly<Record<string, unknown>> = tslibExports;
