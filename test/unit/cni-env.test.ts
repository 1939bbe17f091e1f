// The CNI_* variables a runtime sets, read per command: every missing required
// one named in one code-4 error, the container ID and interface name checked
// by the rules runtimes and Linux apply, CNI_PATH split without empty entries
// (which would search the working directory).
import { describe, expect, it } from 'vitest';
import { readEnvironment, splitPath } from '../../src/cni/env.js';

const ADD = { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c1', CNI_NETNS: '/run/netns/x', CNI_IFNAME: 'eth0' };
const refused = (msg: string, details = '') => expect.objectContaining({ name: 'CniError', code: 4, message: msg, details });
const read = (env: Record<string, string>) => () => readEnvironment(env);

describe('readEnvironment', () => {
  it('reads an ADD as given, with CNI_PATH split and the override off', () => {
    expect(readEnvironment({ ...ADD, CNI_ARGS: 'K8S_POD_NAME=p', CNI_PATH: '/opt/cni/bin::/usr/lib/cni:' })).toEqual({
      command: 'ADD',
      containerId: 'c1',
      netns: '/run/netns/x',
      ifname: 'eth0',
      args: 'K8S_POD_NAME=p',
      path: ['/opt/cni/bin', '/usr/lib/cni'],
      netnsOverride: false,
    });
  });

  it('names every required variable missing, per command, in one error', () => {
    expect(read({})).toThrow(refused('required environment variables [CNI_COMMAND] missing'));
    expect(read({ CNI_COMMAND: 'ADD' })).toThrow(refused('required environment variables [CNI_CONTAINERID,CNI_IFNAME,CNI_NETNS] missing'));
    expect(read({ CNI_COMMAND: 'CHECK', CNI_IFNAME: 'eth0' })).toThrow(refused('required environment variables [CNI_CONTAINERID,CNI_NETNS] missing'));
    expect(read({ CNI_COMMAND: 'DEL', CNI_NETNS: '/x' })).toThrow(refused('required environment variables [CNI_CONTAINERID,CNI_IFNAME] missing'));
    expect(read({ CNI_COMMAND: 'GC' })).toThrow(refused('required environment variables [CNI_PATH] missing'));
    expect(read({ ...ADD, CNI_NETNS: '' })).toThrow(refused('required environment variables [CNI_NETNS] missing')); // set but empty
  });

  it('needs nothing more for DEL without a namespace, STATUS and VERSION', () => {
    expect(readEnvironment({ CNI_COMMAND: 'DEL', CNI_CONTAINERID: 'c1', CNI_IFNAME: 'eth0' }).netns).toBe('');
    expect(readEnvironment({ CNI_COMMAND: 'STATUS' }).command).toBe('STATUS');
    expect(readEnvironment({ CNI_COMMAND: 'VERSION', CNI_CONTAINERID: '!!', CNI_IFNAME: 'a/b' })).toMatchObject({ command: 'VERSION', path: [] }); // not checked where not required
    expect(readEnvironment({ CNI_COMMAND: 'GC', CNI_PATH: '/bin' }).path).toEqual(['/bin']);
  });

  it('refuses a command it does not know, by name', () => {
    expect(read({ CNI_COMMAND: 'add' })).toThrow(refused('unknown CNI_COMMAND: add'));
    expect(read({ CNI_COMMAND: 'toString' })).toThrow(refused('unknown CNI_COMMAND: toString'));
  });

  it('refuses a container ID with characters CNI does not allow, giving it', () => {
    for (const id of ['-c', '.c', 'c d', 'c/d', 'ç']) expect(read({ ...ADD, CNI_CONTAINERID: id }), id).toThrow(refused('invalid characters in CNI_CONTAINERID', id));
    expect(readEnvironment({ ...ADD, CNI_CONTAINERID: 'A0_.-z' }).containerId).toBe('A0_.-z');
  });

  it('refuses an interface name Linux would: over 15 bytes, . or .., / : or whitespace', () => {
    expect(readEnvironment({ ...ADD, CNI_IFNAME: 'a'.repeat(15) }).ifname).toBe('a'.repeat(15));
    expect(read({ ...ADD, CNI_IFNAME: 'a'.repeat(16) })).toThrow(refused('CNI_IFNAME is too long', `an interface name has at most 15 bytes, got "${'a'.repeat(16)}"`));
    expect(read({ ...ADD, CNI_IFNAME: 'é'.repeat(8) })).toThrow(refused('CNI_IFNAME is too long', `an interface name has at most 15 bytes, got "${'é'.repeat(8)}"`)); // 16 bytes
    for (const name of ['.', '..']) expect(read({ ...ADD, CNI_IFNAME: name })).toThrow(refused('CNI_IFNAME is . or ..'));
    for (const name of ['a/b', 'a:b', 'a b', 'a\tb', 'a\u00a0b']) expect(read({ ...ADD, CNI_IFNAME: name }), name).toThrow(refused('CNI_IFNAME contains / or : or whitespace', JSON.stringify(name)));
    expect(readEnvironment({ ...ADD, CNI_IFNAME: '...' }).ifname).toBe('...');
  });

  it('turns the namespace override on for 1 or true in any case only', () => {
    for (const [value, on] of [['1', true], ['true', true], ['TRUE', true], ['0', false], ['yes', false], ['', false]] as const) {
      expect(readEnvironment({ ...ADD, CNI_NETNS_OVERRIDE: value }).netnsOverride, value).toBe(on);
    }
  });
});

describe('splitPath', () => {
  it('drops empty entries, which would search the working directory', () => {
    expect(splitPath('')).toEqual([]);
    expect(splitPath(':/a::/b:')).toEqual(['/a', '/b']);
  });
});
