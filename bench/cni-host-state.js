// What CNI plugins leave in the namespace that stands for the host: veths and
// nftables tables. The CNI sections share that namespace, and a cni-ptp table
// outlives its last DEL by deleteDelayMs (20 s by default), so a section notes
// what is there when it starts and then blames, and removes, only what
// appeared during its own run.

/** The host-side veth names and the nftables tables ("family name") in `host`. */
export async function hostState(host) {
  const { stdout: links } = await host.execFile('ip', ['-j', 'link', 'show', 'type', 'veth']);
  const { stdout: tables } = await host.execFile('nft', ['list', 'tables']);
  return {
    veths: JSON.parse(links.trim() || '[]').map((link) => link.ifname),
    tables: tables.split('\n').filter((line) => line.startsWith('table ')).map((line) => line.slice('table '.length)),
  };
}

/** The veths and tables in `host` now that were not in `before`. */
export async function appearedSince(host, before) {
  const now = await hostState(host);
  return { veths: now.veths.filter((name) => !before.veths.includes(name)), tables: now.tables.filter((table) => !before.tables.includes(table)) };
}

/** Deletes the veths and tables that appeared in `host` since `before`: the section's own. */
export async function removeAppeared(host, before) {
  const { veths, tables } = await appearedSince(host, before);
  for (const name of veths) await host.execFile('ip', ['link', 'del', name]).catch(() => {}); // gone with its container meanwhile
  for (const table of tables) await host.execFile('nft', ['delete', 'table', ...table.split(' ')]);
}
