// `npm run bench [-- section...]`: runs the benchmarks as root on scratch
// namespaces and prints every figure beside a baseline measured in the same run.
import { printTable, scratchNamespaces } from './lib.js';
import { benchAddrset } from './addrset.js';
import { benchCli } from './cli.js';
import { benchCni } from './cni.js';
import { benchCniResident } from './cni-resident.js';
import { benchCniStorm } from './cni-storm.js';
import { benchIo } from './io.js';
import { benchLab } from './lab.js';
import { benchNetlink } from './netlink.js';
import { benchSandbox } from './sandbox.js';
import { benchStartup } from './startup.js';
import { benchToolchains } from './toolchains.js';
import { benchWithNetNS } from './with-netns.js';

const sections = { 'with-netns': benchWithNetNS, toolchains: benchToolchains, io: benchIo, netlink: benchNetlink, addrset: benchAddrset, cni: benchCni, 'cni-resident': benchCniResident, 'cni-storm': benchCniStorm, startup: benchStartup, cli: benchCli, lab: benchLab, sandbox: benchSandbox };

if (process.getuid?.() !== 0) {
  console.error('bench: needs root (CAP_SYS_ADMIN) to create namespaces; run: sudo npm run bench');
  process.exit(1);
}
const wanted = process.argv.slice(2);
const names = scratchNamespaces(2);
for (const [section, run] of Object.entries(sections)) {
  if (wanted.length > 0 && !wanted.includes(section)) continue;
  const note = await run(names);
  if (note) console.error(`${section}: ${note}`);
}
printTable();
