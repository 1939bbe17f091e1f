// A client of the resident daemon's wire format by hand, in Python (Node cannot
// send descriptors on a unix socket): a VERSION request with the files named
// sent as SCM_RIGHTS with its header (none: no ancillary data at all).
// argv: socket, magic, then the files; prints the answer's stdout.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const CLIENT = `
import os, socket, struct, sys
path, magic, files = sys.argv[1], sys.argv[2].encode(), sys.argv[3:]
env = b'CNI_COMMAND=VERSION\\0'
header = magic + struct.pack('>II', len(env), 0)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(path)
fds = [os.open(f, os.O_RDONLY) for f in files]
if fds:
    socket.send_fds(s, [header], fds)
else:
    s.sendall(header)
s.sendall(env)
answer = b''
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    answer += chunk
sys.stdout.buffer.write(answer[16:16 + struct.unpack('>I', answer[8:12])[0]])
`;

/** Writes the client into `dir`; returns its path, to run with python3. */
export function writeRawClient(dir: string): string {
  const path = join(dir, 'client.py');
  writeFileSync(path, CLIENT);
  return path;
}
