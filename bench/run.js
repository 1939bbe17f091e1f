// `npm run bench [-- section-or-group...]`: runs the benchmarks as root on
// scratch namespaces and prints every figure beside a baseline measured in the
// same run. A name that is neither a section nor a group is an error, not an
// empty table.
import { printTable, scratchNamespaces } from './lib.js';
import { benchAddrset } from './addrset.js';
import { benchCapture } from './capture.js';
import { benchCli } from './cli.js';
import { benchCniProcess } from './cni.js';
import { benchCniPodman } from './cni-podman.js';
import { benchCniResident } from './cni-resident.js';
import { benchCniStorm } from './cni-storm.js';
import { benchIo } from './io.js';
import { benchLab } from './lab.js';
import { benchLabMachine } from './lab-machine.js';
import { benchNetlink } from './netlink.js';
import { benchSandbox } from './sandbox.js';
import { benchStartup } from './startup.js';
import { benchToolchains } from './toolchains.js';
import { benchWithNetNS } from './with-netns.js';

const sections = { 'with-netns': benchWithNetNS, toolchains: benchToolchains, io: benchIo, netlink: benchNetlink, addrset: benchAddrset, 'cni-process': benchCniProcess, 'cni-resident': benchCniResident, 'cni-storm': benchCniStorm, 'cni-podman': benchCniPodman, startup: benchStartup, cli: benchCli, lab: benchLab, 'lab-machine': benchLabMachine, capture: benchCapture, sandbox: benchSandbox };

/** Names that stand for several sections, run in the order of `sections`. */
const groups = { cni: ['cni-process', 'cni-resident', 'cni-storm', 'cni-podman'] };

const wanted = process.argv.slice(2).flatMap((name) => groups[name] ?? [name]);
const unknown = wanted.filter((name) => !Object.hasOwn(sections, name));
if (unknown.length > 0) {
  console.error(`bench: no section ${unknown.join(', ')}; sections: ${Object.keys(sections).join(', ')}; groups: ${Object.keys(groups).join(', ')}`);
  process.exit(2);
}
if (process.getuid?.() !== 0) {
  console.error('bench: needs root (CAP_SYS_ADMIN) to create namespaces; run: sudo npm run bench');
  process.exit(1);
}
const names = scratchNamespaces(2);
for (const [section, run] of Object.entries(sections)) {
  if (wanted.length > 0 && !wanted.includes(section)) continue;
  const note = await run(names);
  if (note) console.error(`${section}: ${note}`);
}
printTable();
