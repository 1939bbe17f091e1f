// parseConfList reads a conflist as libcni does: each malformed list refused
// with what is wrong, the version chosen from cniVersion and cniVersions
// (newer ones skipped), the flags in libcni's spellings, and the bytes kept.
// Found by the mutation pass over src/cni/testing/conflist.ts (issue 34).
import { describe, expect, it } from 'vitest';
import { loadConfList, parseConfList } from '../../dist/cni/testing/index.js';

const list = (extra: object = {}) => ({ name: 'net1', cniVersion: '1.0.0', plugins: [{ type: 'ptp' }], ...extra });

describe('parseConfList', () => {
  it('refuses a malformed list, saying what is wrong', () => {
    const cases: [unknown, string | RegExp][] = [
      [7, 'give its text, its bytes or a parsed object'],
      ['[1]', 'not a JSON object'],
      ['null', 'not a JSON object'],
      ['{', /^not JSON: /],
      [list({ name: 'a b' }), /^name must match \/.*\/, got "a b"$/],
      [list({ name: 7 }), /^name must match \/.*\/, got 7$/],
      [list({ plugins: [] }), 'plugins must be a non-empty list'],
      [list({ plugins: [7] }), 'plugins[0] must be an object'],
      [list({ plugins: [{ type: 'ptp' }, { type: '' }] }), 'plugins[1] has no type'],
      [list({ plugins: [{ type: 7 }] }), 'plugins[0] has no type'],
      [list({ plugins: [{ type: 'ptp', capabilities: { portMappings: true, bandwidth: 'yes' } }] }), 'plugins[0].capabilities must map names to booleans'],
      [list({ plugins: [{ type: 'ptp', capabilities: [true] }] }), 'plugins[0].capabilities must map names to booleans'],
      [list({ cniVersion: '1.0' }), 'cniVersion must be a version X.Y.Z, got "1.0"'],
      [list({ cniVersions: '1.0.0' }), 'cniVersions must be a list of versions X.Y.Z'],
      [list({ cniVersions: ['1.0.0', 'x'] }), 'cniVersions must be a list of versions X.Y.Z'],
      [list({ cniVersion: undefined }), 'cniVersion (or cniVersions) is required'],
      [list({ cniVersion: '9.0.0', cniVersions: ['8.0.0'] }), 'none of cniVersion and cniVersions is 1.1.0 or older'],
      [list({ disableCheck: 'yes' }), 'disableCheck must be a boolean, got "yes"'],
      [list({ disableGC: 1 }), 'disableGC must be a boolean, got 1'],
    ];
    for (const [source, message] of cases) {
      expect(() => parseConfList(source as object), JSON.stringify(source)).toThrow(expect.objectContaining({ code: 'ERR_NETNS_INVALID_ARG', message: typeof message === 'string' ? `network configuration list: ${message}` : expect.stringMatching(new RegExp(`^network configuration list: ${message.source.slice(1)}`)) }));
    }
  });

  it('chooses the newest version of cniVersion and cniVersions it knows, skipping newer ones', () => {
    expect(parseConfList(list({ cniVersion: '0.4.0', cniVersions: ['1.0.0', '0.3.1'] })).cniVersion).toBe('1.0.0');
    expect(parseConfList(list({ cniVersion: '1.0.0', cniVersions: ['0.4.0'] })).cniVersion).toBe('1.0.0');
    expect(parseConfList(list({ cniVersion: undefined, cniVersions: ['0.4.0', '9.9.9'] })).cniVersion).toBe('0.4.0');
    expect(parseConfList(list({ cniVersion: '9.9.9', cniVersions: ['0.3.1'] })).cniVersion).toBe('0.3.1');
  });

  it('reads disableCheck and disableGC as booleans or their names in any case', () => {
    const flags = (extra: object) => {
      const { disableCheck, disableGC } = parseConfList(list(extra));
      return [disableCheck, disableGC];
    };
    expect(flags({})).toEqual([false, false]);
    expect(flags({ disableCheck: true, disableGC: 'TRUE' })).toEqual([true, true]);
    expect(flags({ disableCheck: 'False', disableGC: false })).toEqual([false, false]);
  });

  it('keeps the bytes it was given, or the serialized object', () => {
    const text = JSON.stringify(list());
    expect(parseConfList(`${text}\n`).bytes.toString()).toBe(`${text}\n`);
    expect(parseConfList(list()).bytes.toString()).toBe(text);
  });

  it('loadConfList refuses what is not a path', async () => {
    await expect(loadConfList(7 as never)).rejects.toMatchObject({ code: 'ERR_NETNS_INVALID_ARG', message: 'loadConfList takes a file path' });
  });
});
