// Who may call a resident daemon: root and the daemon's own user. The socket's
// mode (0600) already keeps others out; this is what still holds if it is ever
// loosened. The socket here is opened to all by hand, and a raw client runs as
// nobody, with serveResident in this process (where the mutation tool sees it).
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveResident, type ResidentServer } from '../../dist/cni/index.js';
import { inUserNamespace, privileged } from '../helpers/privileges.js';
import { writeRawClient } from '../helpers/resident-raw-client.js';

const NOBODY = 65534;

// Running a client as another user needs the machine's real root (a rootless sandbox maps one uid).
describe.skipIf(!privileged || inUserNamespace || process.geteuid!() !== 0)('the resident daemon refuses a caller of another user', () => {
  let dir: string;
  let client: string;
  let server: ResidentServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netns-peer-uid-'));
    chmodSync(dir, 0o711); // nobody may pass through to the socket and the client
    client = writeRawClient(dir);
    server = await serveResident({ add: () => ({ cniVersion: '1.0.0' }), del: () => {}, check: () => {} }, { versions: ['1.0.0'] }, { socketPath: join(dir, 'p.sock'), handleSignals: false });
    chmodSync(server.socketPath, 0o666); // loosened by hand
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const versionAs = async (uid: number) => JSON.parse((await promisify(execFile)('python3', [client, server.socketPath, 'NCS3', '/proc/self/ns/net'], { uid, gid: uid })).stdout) as object;

  it('answers nobody with a refusal naming its uid, and root with the answer', async () => {
    expect(await versionAs(NOBODY)).toMatchObject({ code: 999, msg: `uid ${NOBODY} may not call this resident plugin` });
    expect(await versionAs(0)).toMatchObject({ supportedVersions: ['1.0.0'] });
  });
});
