// The calling side of withNetNS's fn: which functions can travel as source
// text, and which file fn's require and import() resolve from (the caller's,
// found on the stack only when fn names require or import).
import { EventEmitter } from 'node:events';
import { fileURLToPath, pathToFileURL } from 'node:url';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { callerFile, functionSource } from '../../dist/run/fn-source.js';

const thisFile = fileURLToPath(import.meta.url);

describe('functionSource', () => {
  it('gives a function’s own text', () => {
    const fn = (a: number) => a + 1;
    expect(functionSource(fn)).toBe(fn.toString());
    expect(functionSource(async function named() {})).toMatch(/^async function named/);
  });

  it.each([
    [42, 'fn must be a function, got number'],
    ['() => 1', 'fn must be a function, got string'],
    [null, 'fn must be a function, got object'],
    [(() => 1).bind(null), 'fn must be written in JavaScript (a bound or built-in function has no source to send)'],
    [Math.max, 'fn must be written in JavaScript (a bound or built-in function has no source to send)'],
    [class Job {}, 'fn must be a function, not a class'],
  ])('refuses %s', (fn, message) => {
    expect(() => functionSource(fn)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message }));
  });
});

describe('callerFile', () => {
  function entry(source: string): string | null {
    return callerFile(source, entry);
  }

  it('names the file that called the entry when fn mentions require or import', () => {
    expect(entry('() => require("node:fs")')).toBe(thisFile);
    expect(entry('async () => import("node:fs")')).toBe(thisFile);
  });

  it('does not look when fn mentions neither', () => {
    expect(entry('() => 1')).toBeNull();
  });

  it('skips Node’s own frames to the user’s file', () => {
    const emitter = new EventEmitter();
    let found: string | null | undefined;
    const listener = (source: string): void => void (found = callerFile(source, listener));
    emitter.on('call', listener);
    emitter.emit('call', '() => require("x")'); // the listener is called by node:events, emitted from here
    expect(found).toBe(thisFile);
    const mapper = (source: string): string | null => callerFile(source, mapper);
    expect(['() => require("x")'].map(mapper)).toEqual([thisFile]); // called by a built-in: a frame with no file
  });

  it('reads a file: URL frame as its path, and says null for code with no file', () => {
    const run = (filename: string): unknown =>
      vm.runInThisContext('(entry) => entry("() => require(\\"x\\")")', { filename })(entry);
    expect(run(pathToFileURL(thisFile).href)).toBe(thisFile);
    expect(run('[eval]')).toBeNull();
    expect(run('/no/such/file.js')).toBeNull();
    expect(run('package.json')).toBeNull(); // a relative name is no module's file, even where the cwd has one
  });

  it('leaves the stack settings as they were', () => {
    const limit = Error.stackTraceLimit;
    const prepare = Error.prepareStackTrace;
    Error.stackTraceLimit = 7;
    try {
      entry('() => require("x")');
      expect(Error.stackTraceLimit).toBe(7);
      expect(Error.prepareStackTrace).toBe(prepare);
    } finally {
      Error.stackTraceLimit = limit;
    }
  });

  it('resolves from the cwd when Error cannot be changed (--frozen-intrinsics)', () => {
    const limit = Error.stackTraceLimit;
    Object.defineProperty(Error, 'stackTraceLimit', { value: limit, writable: false, configurable: true });
    try {
      expect(entry('() => require("x")')).toBeNull();
    } finally {
      Object.defineProperty(Error, 'stackTraceLimit', { value: limit, writable: true, configurable: true });
    }
  });
});
