// The addon's method table, exactly: what TypeScript may call (src/native.ts).
import { describe, expect, it } from 'vitest';
import { native } from '../../dist/core/native.js';

describe('native surface', () => {
  it('exports exactly the methods the TypeScript layer uses', () => {
    expect(Object.getOwnPropertyNames(native()).sort()).toEqual(
      [
        'attachNamespace',
        'becomeSwitchThread',
        'closeFd',
        'createNamespace',
        'deleteNamespace',
        'dropEffectiveCapability',
        'enter',
        'ioBind',
        'ioReadFile',
        'ioSocket',
        'ioStats',
        'ioWriteFile',
        'killProgram',
        'netlinkOpen',
        'netlinkOpenHere',
        'netlinkSubscribe',
        'netlinkTransact',
        'netlinkTransactOffThread',
        'netlinkWatch',
        'openNetns',
        'openNetnsIdentity',
        'packetCapture',
        'packetOpen',
        'peerCredentials',
        'pipe',
        'receiveRights',
        'restore',
        'runDirWatch',
        'runProgram',
        'socketNetns',
        'strerror',
        'threadNetns',
        'tryLockFile',
      ].sort(),
    );
  });
});
