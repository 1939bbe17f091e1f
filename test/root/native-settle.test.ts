// Settling a job on the JS thread can throw (a getter or setter user code put
// on Object.prototype runs while the addon builds the result or the error).
// The promise must still settle, and the job must stop keeping the event loop
// alive: the process exits by itself.
import { describe, expect, it } from 'vitest';
import { distUrl, runNodeScript } from '../helpers/node-child.js';
import { privileged } from '../helpers/privileges.js';

const prelude = `
  import { readdirSync, readlinkSync } from 'node:fs';
  const { native } = await import(${JSON.stringify(distUrl('core/native.js'))});
  // descriptors of network namespaces other than the process's own (the I/O
  // threads keep one of their own home each)
  const home = readlinkSync('/proc/self/ns/net');
  const foreignNamespaceFds = () => readdirSync('/proc/self/fd').filter((fd) => {
    try { const link = readlinkSync('/proc/self/fd/' + fd); return link.startsWith('net:') && link !== home; } catch { return false; }
  }).length;
  const throwingSetter = (key) => Object.defineProperty(Object.prototype, key, {
    configurable: true,
    set() { throw new Error('setter for ' + key); },
  });
`;

describe.skipIf(!privileged)('settling native jobs', () => {
  it('rejects with what building the result threw, closes what the job made, and lets the process exit', async () => {
    const result = await runNodeScript(`${prelude}
      throwingSetter('fd');
      const outcome = await native().createNamespace('/run/netns', '').then(() => 'resolved', (e) => 'rejected: ' + e.message);
      delete Object.prototype.fd;
      console.log(JSON.stringify({ outcome, leaked: foreignNamespaceFds() }));
    `);
    expect(result).toMatchObject({ code: 0, signal: null });
    expect(JSON.parse(result.stdout)).toEqual({ outcome: 'rejected: setter for fd', leaked: 0 });
  });

  it('rejects with what building the error threw, and lets the process exit', async () => {
    const result = await runNodeScript(`${prelude}
      const { fd } = native().openNetns('/proc/self/ns/net');
      throwingSetter('code');
      const outcome = await native().ioReadFile(fd, '/nonexistent/nsnat-settle').then(() => 'resolved', (e) => 'rejected: ' + e.message);
      delete Object.prototype.code;
      native().closeFd(fd);
      console.log(JSON.stringify({ outcome }));
    `);
    expect(result).toMatchObject({ code: 0, signal: null });
    expect(JSON.parse(result.stdout)).toEqual({ outcome: 'rejected: setter for code' });
  });
});
