// The helpers esbuild 0.28 calls from inside function bodies (its runtime,
// internal/runtime/runtime.go, called from js_parser lowering and the linker).
// esbuild declares them once per output file, so a function rebuilt from its
// source text in another thread finds none of them. These are this package's
// own implementations of the same behaviour and call signatures, written from
// what each helper does: the rebuilt fn must act exactly as the original did.
//
// Not here: the bundle plumbing (__esm, __commonJS, __export, __reExport,
// __toCommonJS, __glob, __toBinary): esbuild calls those only at module scope
// or next to module-scope wrappers that cannot travel (see explain.ts). Nor
// the runtime's private internals (__defProp, __knownSymbol, __typeError, ...):
// esbuild never references them from user code, only from other helpers.
// __require is bound per fn, in index.ts.

// Compiled code passes anything: these types only keep the bodies readable.
type Bag = Record<PropertyKey, any>;
type Member = WeakMap<object, unknown> | WeakSet<object>;
type AnyFn = (this: unknown, ...args: any[]) => any;

// Symbols a runtime may lack (Symbol.metadata on Node 20) are shared through
// the registry under the same key esbuild uses, so both sides agree on them.
function wellKnown(name: string): symbol {
  return (Symbol as unknown as Bag)[name] ?? Symbol.for(`Symbol.${name}`);
}

function fail(message: string): never {
  throw new TypeError(message);
}

// A key that exists anywhere on the chain is redefined as an own data
// property (so an inherited setter never runs); a new key is simply assigned.
function defineField(obj: Bag, key: PropertyKey, value: unknown): unknown {
  if (key in obj) return Object.defineProperty(obj, key, { enumerable: true, configurable: true, writable: true, value });
  return (obj[key] = value);
}

const isEnumerable = (obj: object, key: PropertyKey): boolean => Object.prototype.propertyIsEnumerable.call(obj, key);

// --- keepNames --------------------------------------------------------------

const __name = <T extends object>(target: T, value: string): T =>
  Object.defineProperty(target, 'name', { value, configurable: true });

// --- object spread / rest, **, tagged templates -----------------------------

function __spreadValues(target: Bag, source: Bag | null | undefined): Bag {
  const from: Bag = source || {};
  for (const key in from) if (Object.hasOwn(from, key)) defineField(target, key, from[key]);
  for (const symbol of Object.getOwnPropertySymbols(from)) {
    if (isEnumerable(from, symbol)) defineField(target, symbol, from[symbol]);
  }
  return target;
}

const __spreadProps = (target: object, source: object): object =>
  Object.defineProperties(target, Object.getOwnPropertyDescriptors(source));

// `key + ''` (not String(key)): a computed key converts with the default hint.
const __restKey = (key: unknown): PropertyKey => (typeof key === 'symbol' ? key : (key as string) + '');

function __objRest(source: Bag | null | undefined, exclude: PropertyKey[]): Bag {
  const rest: Bag = {};
  for (const key in source) if (Object.hasOwn(source, key) && !exclude.includes(key)) rest[key] = source[key];
  if (source != null) {
    for (const symbol of Object.getOwnPropertySymbols(source)) {
      if (!exclude.includes(symbol) && isEnumerable(source, symbol)) rest[symbol] = source[symbol];
    }
  }
  return rest;
}

const __pow = Math.pow;

const __template = (cooked: string[], raw?: string[]): TemplateStringsArray =>
  Object.freeze(Object.defineProperty(cooked, 'raw', { value: Object.freeze(raw || cooked.slice()) })) as never;

// --- class fields, #private members, super ----------------------------------

const __publicField = (obj: Bag, key: unknown, value: unknown): unknown =>
  defineField(obj, typeof key === 'symbol' ? key : (key as string) + '', value);

function checkBrand(obj: object, member: Member, action: string): void {
  if (!member.has(obj)) fail(`Cannot ${action}`);
}

function __privateIn(member: Member, obj: unknown): boolean {
  if (Object(obj) !== obj) fail('Cannot use the "in" operator on this value');
  return member.has(obj as object);
}

function __privateGet(obj: object, member: Member, getter?: AnyFn): unknown {
  checkBrand(obj, member, 'read from private field');
  return getter ? getter.call(obj) : (member as WeakMap<object, unknown>).get(obj);
}

function __privateAdd(obj: object, member: Member, value?: unknown): unknown {
  if (member.has(obj)) fail('Cannot add the same private member more than once');
  return member instanceof WeakSet ? member.add(obj) : member.set(obj, value);
}

function __privateSet(obj: object, member: Member, value: unknown, setter?: AnyFn): unknown {
  checkBrand(obj, member, 'write to private field');
  if (setter) setter.call(obj, value);
  else (member as WeakMap<object, unknown>).set(obj, value);
  return value;
}

function __privateMethod(obj: object, member: Member, method: AnyFn): AnyFn {
  checkBrand(obj, member, 'access private method');
  return method;
}

// `this.#x++`, destructuring into `this.#x`: a reference with a `_` property.
const __privateWrapper = (obj: object, member: Member, setter?: AnyFn, getter?: AnyFn): { _: unknown } => ({
  set _(value: unknown) {
    __privateSet(obj, member, value, setter);
  },
  get _() {
    return __privateGet(obj, member, getter);
  },
});

function __earlyAccess(name: string): never {
  throw new ReferenceError(`Cannot access "${name}" before initialization`);
}

const __superGet = (cls: object, obj: object, key: PropertyKey): unknown =>
  Reflect.get(Object.getPrototypeOf(cls), key, obj);

function __superSet(cls: object, obj: object, key: PropertyKey, value: unknown): unknown {
  Reflect.set(Object.getPrototypeOf(cls), key, value, obj);
  return value;
}

const __superWrapper = (cls: object, obj: object, key: PropertyKey): { _: unknown } => ({
  get _() {
    return __superGet(cls, obj, key);
  },
  set _(value: unknown) {
    __superSet(cls, obj, key, value);
  },
});

// --- async functions, async generators, for await ---------------------------

// `async` lowered to a generator: each yielded value is awaited and sent back.
function __async(thisArg: unknown, args: ArrayLike<unknown> | null, body: AnyFn): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let generator: Generator;
    const advance = (step: IteratorResult<unknown>): void => {
      if (step.done) resolve(step.value);
      else Promise.resolve(step.value).then(onValue, onError);
    };
    const resumeWith = (method: 'next' | 'throw', value: unknown): void => {
      try {
        advance(generator[method](value));
      } catch (error) {
        reject(error);
      }
    };
    const onValue = (value: unknown): void => resumeWith('next', value);
    const onError = (error: unknown): void => resumeWith('throw', error);
    generator = body.apply(thisArg, args as unknown[]);
    advance(generator.next());
  });
}

// The mark of an `await` inside a lowered async generator (esbuild writes
// `yield new __await(x)`); `delegated` marks one made by __yieldStar, whose
// result is already an iterator result.
class __await {
  constructor(
    readonly awaited: unknown,
    readonly delegated?: unknown,
  ) {}
}

type Resolver = (value: unknown) => void;

function __asyncGenerator(thisArg: unknown, args: ArrayLike<unknown> | null, body: AnyFn): Bag {
  const generator: Generator = body.apply(thisArg, args as unknown[]);
  // Runs the generator to its next real `yield` (or end), awaiting marks on the way.
  const resume = (method: 'next' | 'throw' | 'return', input: unknown, resolve: Resolver, reject: Resolver): void => {
    try {
      const step = generator[method](input);
      const mark = step.value instanceof __await ? step.value : undefined;
      Promise.resolve(mark ? mark.awaited : step.value)
        .then((settled: any) => {
          if (!mark) return resolve({ value: settled, done: step.done });
          const sent = mark.delegated ? { done: settled.done, value: settled.value } : settled;
          resume(method === 'return' ? 'return' : 'next', sent, resolve, reject);
        })
        .catch((error: unknown) => resume('throw', error, resolve, reject));
    } catch (error) {
      reject(error);
    }
  };
  // Calls run one at a time, in order: each waits for the one before to settle.
  let pending: Promise<unknown> | undefined;
  const clear = (settled: Promise<unknown>): void => {
    if (pending === settled) pending = undefined;
  };
  const iterator: Bag = { [wellKnown('asyncIterator')]: () => iterator };
  for (const method of ['next', 'throw', 'return'] as const) {
    iterator[method] = (input: unknown): Promise<unknown> => {
      const call = new Promise((resolve, reject) => {
        const run = (): void => resume(method, input, resolve, reject);
        if (pending) void pending.then(run);
        else run();
      });
      const settled: Promise<unknown> = call.then(
        () => clear(settled),
        () => clear(settled),
      );
      pending = settled;
      return call;
    };
  }
  return iterator;
}

// `yield*` inside a lowered async generator: a sync iterator that hands each
// step of the delegate to __asyncGenerator as an await mark.
function __yieldStar(value: Bag): Bag {
  const wrapper: Bag = {};
  const asyncMethod = value[wellKnown('asyncIterator')];
  let delegate: Bag;
  let forward: (method: string) => void;
  if (asyncMethod == null) {
    delegate = value[wellKnown('iterator')]();
    forward = (method) => (wrapper[method] = (input: unknown) => delegate[method](input));
  } else {
    delegate = asyncMethod.call(value);
    let awaiting = false;
    forward = (method) =>
      (wrapper[method] = (input: unknown) => {
        if (awaiting) {
          awaiting = false;
          if (method === 'throw') throw input;
          return input;
        }
        awaiting = true;
        const result = new Promise((resolve) => {
          const step = delegate[method](input);
          if (!(step instanceof Object)) fail('Object expected');
          resolve(step);
        });
        return { done: false, value: new __await(result, 1) };
      });
  }
  wrapper[wellKnown('iterator')] = () => wrapper;
  forward('next');
  if ('throw' in delegate) forward('throw');
  else
    wrapper.throw = (error: unknown) => {
      throw error;
    };
  if ('return' in delegate) forward('return');
  return wrapper;
}

// `for await` over a value: its async iterator, or its sync one made async.
function __forAwait(value: Bag): Bag {
  const asyncMethod = value[wellKnown('asyncIterator')];
  if (asyncMethod) return asyncMethod.call(value);
  const inner: Bag = value[wellKnown('iterator')]();
  const wrapper: Bag = {};
  for (const method of ['next', 'return']) {
    const step = inner[method];
    if (!step) continue;
    wrapper[method] = (input: unknown) =>
      new Promise((resolve, reject) => {
        const result = step.call(inner, input);
        const done = result.done;
        Promise.resolve(result.value).then((settled) => resolve({ value: settled, done }), reject);
      });
  }
  return wrapper;
}

// --- using / await using ----------------------------------------------------

type Disposal = [isAsync: unknown, dispose?: AnyFn, value?: unknown];

function __using(stack: Disposal[], value: unknown, isAsync?: unknown): unknown {
  if (value == null) {
    if (isAsync) stack.push([isAsync]);
    return value;
  }
  if (typeof value !== 'object' && typeof value !== 'function') fail('Object expected');
  const holder = value as Bag;
  let dispose: AnyFn | undefined = isAsync ? holder[wellKnown('asyncDispose')] : undefined;
  let syncFallback: AnyFn | undefined;
  if (dispose === undefined) {
    dispose = holder[wellKnown('dispose')];
    if (isAsync) syncFallback = dispose;
  }
  if (typeof dispose !== 'function') fail('Object not disposable');
  // `await using` on a sync disposer: a throw becomes a rejection.
  if (syncFallback) {
    const inner = syncFallback;
    dispose = function (this: unknown) {
      try {
        inner.call(this);
      } catch (error) {
        return Promise.reject(error);
      }
      return undefined;
    };
  }
  stack.push([isAsync, dispose, value]);
  return value;
}

// SuppressedError is missing before Node 24: the same shape, made by hand.
function suppressed(error: unknown, suppressedError: unknown, message: string): Error {
  const Ctor = (globalThis as Bag).SuppressedError;
  if (typeof Ctor === 'function') return new Ctor(error, suppressedError, message);
  return Object.assign(new Error(message), { name: 'SuppressedError', error, suppressed: suppressedError });
}

// Disposes in reverse order; returns a promise once an async disposal is met.
function __callDispose(stack: Disposal[], error: unknown, hasError: unknown): Promise<void> | undefined {
  const record = (thrown: unknown): void => {
    if (hasError) error = suppressed(thrown, error, 'An error was suppressed during disposal');
    else {
      hasError = true;
      error = thrown;
    }
  };
  const next = (): Promise<void> | undefined => {
    for (let entry = stack.pop(); entry; entry = stack.pop()) {
      try {
        const result = entry[1] && entry[1].call(entry[2]);
        if (entry[0])
          return Promise.resolve(result).then(next, (thrown: unknown) => {
            record(thrown);
            return next();
          });
      } catch (thrown) {
        record(thrown);
      }
    }
    if (hasError) throw error;
    return undefined;
  };
  return next();
}

// --- TypeScript experimentalDecorators --------------------------------------

// kind: undefined for the class, 1 for a method or parameter, 2 for a field.
function __decorateClass(decorators: (AnyFn | undefined)[], target: Bag, key?: PropertyKey, kind?: number): unknown {
  let result: any = kind! > 1 ? undefined : kind ? Object.getOwnPropertyDescriptor(target, key!) : target;
  for (let i = decorators.length - 1; i >= 0; i--) {
    const decorator = decorators[i];
    if (decorator) result = (kind ? decorator(target, key, result) : decorator(result)) || result;
  }
  if (kind && result) Object.defineProperty(target, key!, result);
  return result;
}

const __decorateParam =
  (index: number, decorator: AnyFn) =>
  (target: object, key: PropertyKey): unknown =>
    decorator(target, key, index);

// --- JavaScript (stage 3) decorators ----------------------------------------
// esbuild keeps one array per decorated class: [0] class initializers,
// [1] static and [2] instance extra initializers, [3] the metadata object,
// then a pair of slots (initializers, extra initializers) per field/accessor.
// A member's flags: kind in bits 0-2, static in bit 3, private in bit 4.

const KIND_NAMES = ['class', 'method', 'getter', 'setter', 'accessor', 'field'] as const;
const Kind = { Class: 0, Method: 1, Getter: 2, Setter: 3, Accessor: 4, Field: 5 } as const;
type Kind = (typeof Kind)[keyof typeof Kind];
const STATIC = 8;
const PRIVATE = 16;

function __decoratorStart(base: Bag | null | undefined): unknown[] {
  const state: unknown[] = [];
  state[3] = Object.create(base?.[wellKnown('metadata')] ?? null);
  return state;
}

const __decoratorMetadata = (state: unknown[], target: Bag): unknown => defineField(target, wellKnown('metadata'), state[3]);

// flags: bit 0 set = call each initializer for effect; else thread `value`
// through them. flags >> 1 is the slot of the initializers.
function __runInitializers(state: unknown[], flags: number, self: unknown, value?: unknown): unknown {
  const initializers = state[flags >> 1] as AnyFn[] | undefined;
  const count = initializers ? initializers.length : 0;
  for (let i = 0; i < count; i++) {
    if (flags & 1) initializers![i]!.call(self);
    else value = initializers![i]!.call(self, value);
  }
  return value;
}

function expectFunction(fn: unknown): AnyFn | undefined {
  if (fn !== undefined && typeof fn !== 'function') fail('Function expected');
  return fn as AnyFn | undefined;
}

// What a decorator may change: the member's descriptor (public methods and
// accessors; an auto-accessor's get/set pair over its private storage).
function memberDescriptor(kind: Kind, isPrivate: boolean, target: Bag, name: string, storage: Member): PropertyDescriptor | undefined {
  if (kind === Kind.Accessor) {
    const pair = {
      get [name](): unknown {
        return __privateGet(this, storage);
      },
      set [name](value: unknown) {
        __privateSet(this, storage, value);
      },
    };
    return Object.getOwnPropertyDescriptor(pair, name);
  }
  if (kind === Kind.Class || kind === Kind.Field || isPrivate) return undefined;
  return Object.getOwnPropertyDescriptor(target, name);
}

interface ElementState {
  kind: Kind;
  isStatic: boolean;
  isPrivate: boolean;
  name: string;
  target: any;
  extra: any;
  desc: PropertyDescriptor | undefined;
}

// The context object each decorator receives; `done` closes addInitializer.
function decoratorContext(element: ElementState, metadata: unknown, extraInitializers: unknown[], done: { closed: boolean }): Bag {
  const { kind, isStatic, isPrivate, name } = element;
  const context: Bag = {
    kind: KIND_NAMES[kind],
    name,
    metadata,
    addInitializer: (fn: unknown) =>
      done.closed ? fail('Already initialized') : extraInitializers.push(expectFunction(fn || null)),
  };
  if (kind === Kind.Class) return context;
  context.static = isStatic;
  context.private = isPrivate;
  // For a private member, `target` is its brand (WeakMap or WeakSet).
  const access: Bag = (context.access = {
    has: isPrivate ? (obj: unknown) => __privateIn(element.target, obj) : (obj: Bag) => name in obj,
  });
  if (kind !== Kind.Setter) {
    access.get = isPrivate
      ? (obj: object) =>
          kind === Kind.Method
            ? __privateMethod(obj, element.target, element.extra)
            : __privateGet(obj, element.target, kind === Kind.Accessor ? element.desc!.get : element.extra)
      : (obj: Bag) => obj[name];
  }
  if (kind > Kind.Getter) {
    access.set = isPrivate
      ? (obj: object, value: unknown) =>
          __privateSet(obj, element.target, value, kind === Kind.Accessor ? element.desc!.set : element.extra)
      : (obj: Bag, value: unknown) => (obj[name] = value);
  }
  return context;
}

// The value a decorator is applied to.
function decoratedValue(element: ElementState): unknown {
  const { kind, desc } = element;
  if (kind === Kind.Class) return element.target;
  if (kind === Kind.Field) return undefined;
  if (kind === Kind.Accessor) return { get: desc!.get, set: desc!.set };
  if (element.isPrivate) return element.extra;
  return desc![kind === Kind.Method ? 'value' : kind === Kind.Getter ? 'get' : 'set'];
}

// Takes what a decorator returned in place of the decorated value.
function applyResult(element: ElementState, result: any, initializers: unknown[]): void {
  const { kind } = element;
  if (kind !== Kind.Accessor || result === undefined) {
    if (!expectFunction(result)) return;
    if (kind === Kind.Field) initializers.unshift(result);
    else if (kind === Kind.Class) element.target = result;
    else if (element.isPrivate) element.extra = result;
    else element.desc![kind === Kind.Method ? 'value' : kind === Kind.Getter ? 'get' : 'set'] = result;
    return;
  }
  if (typeof result !== 'object' || result === null) fail('Object expected');
  const desc = element.desc!;
  let fn: AnyFn | undefined;
  if ((fn = expectFunction(result.get))) desc.get = fn;
  if ((fn = expectFunction(result.set))) desc.set = fn;
  if ((fn = expectFunction(result.init))) initializers.unshift(fn);
}

// Applies one element's decorators, last first. For a public member `target`
// is the class; for a private one, its brand, and `extra` its function (a
// method, getter or setter) or its storage (an accessor). Returns the class
// for the class and public members, else the private function or descriptor.
function __decorateElement(state: unknown[], flags: number, name: string, decorators: AnyFn[], target: any, extra?: any): unknown {
  const kind = (flags & 7) as Kind;
  const isStatic = !!(flags & STATIC);
  const isPrivate = !!(flags & PRIVATE);
  const slot = kind >= Kind.Accessor ? state.length + 1 : kind === Kind.Class ? 0 : isStatic ? 1 : 2;
  const initializers: unknown[] = kind >= Kind.Accessor ? (state[slot - 1] = []) : [];
  const extraInitializers = (state[slot] ??= []) as unknown[];
  if (kind !== Kind.Class && !isPrivate && !isStatic) target = target.prototype;
  const element: ElementState = { kind, isStatic, isPrivate, name, target, extra, desc: undefined };
  element.desc = memberDescriptor(kind, isPrivate, target, name, extra);
  if (kind === Kind.Class) __name(target, name);
  else if (isPrivate && kind < Kind.Accessor) __name(extra, `${['', '', 'get ', 'set '][kind]}${name}`);
  for (let i = decorators.length - 1; i >= 0; i--) {
    const done = { closed: false };
    const context = decoratorContext(element, state[3], extraInitializers, done);
    const decorator = decorators[i]!; // called plainly: `this` is undefined, as in a native decorator
    const result = decorator(decoratedValue(element), context);
    done.closed = true;
    applyResult(element, result, initializers);
  }
  if (kind === Kind.Class) __decoratorMetadata(state, element.target);
  if (element.desc) Object.defineProperty(element.target, name, element.desc);
  if (!isPrivate) return element.target;
  return kind === Kind.Accessor ? element.desc : element.extra;
}

// --- bundles ----------------------------------------------------------------

// Live bindings of a CommonJS module's own names onto `to`.
function copyProps(to: Bag, from: any): Bag {
  if ((from && typeof from === 'object') || typeof from === 'function') {
    for (const key of Object.getOwnPropertyNames(from)) {
      if (Object.hasOwn(to, key)) continue;
      const desc = Object.getOwnPropertyDescriptor(from, key);
      Object.defineProperty(to, key, { get: () => from[key], enumerable: !desc || desc.enumerable! });
    }
  }
  return to;
}

// A CommonJS module seen as ESM: `default` is module.exports unless it says
// it was compiled from ESM (`__esModule`) and the importer is not Node-style.
function __toESM(mod: any, isNodeMode?: unknown): Bag {
  const target: Bag = mod != null ? Object.create(Object.getPrototypeOf(mod)) : {};
  const withDefault =
    isNodeMode || !mod || !mod.__esModule ? Object.defineProperty(target, 'default', { value: mod, enumerable: true }) : target;
  return copyProps(withDefault, mod);
}

/** esbuild's helpers by the name it gives them, except `__require` (bound per fn). */
export const esbuildHelpers: Readonly<Record<string, unknown>> = Object.freeze({
  __name,
  __spreadValues,
  __spreadProps,
  __restKey,
  __objRest,
  __pow,
  __template,
  __publicField,
  __privateIn,
  __privateGet,
  __privateAdd,
  __privateSet,
  __privateMethod,
  __privateWrapper,
  __earlyAccess,
  __superGet,
  __superSet,
  __superWrapper,
  __async,
  __await,
  __asyncGenerator,
  __yieldStar,
  __forAwait,
  __using,
  __callDispose,
  __decorateClass,
  __decorateParam,
  __decoratorStart,
  __decoratorMetadata,
  __runInitializers,
  __decorateElement,
  __toESM,
});
