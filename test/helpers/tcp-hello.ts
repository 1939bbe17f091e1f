// One TCP round trip between namespaces: a server in `server` bound to
// `bind` answers "hello" and closes; `client` connects to `address` (default:
// the bound address) and reads the answer back. Proves a path carries TCP.
// `ports` fixes both ends for a path that maps one port to another (a DNAT).
import net from 'node:net';
import type { NetNS } from '../../dist/index.js';

export async function tcpHello(server: NetNS, bind: string, client: NetNS, address = bind, ports?: { listen: number; connect: number }): Promise<string> {
  const listening = await server.listen(net.createServer((socket) => socket.end('hello')), { host: bind, port: ports?.listen ?? 0 });
  try {
    const socket = await client.connect({ host: address, port: ports?.connect ?? (listening.address() as net.AddressInfo).port });
    const chunks: Buffer[] = [];
    for await (const chunk of socket) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString();
  } finally {
    listening.close();
  }
}
