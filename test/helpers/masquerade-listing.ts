// The official plugins' nftables masquerade table as `nft list` prints it,
// with the given lines as masq_checks's rules: the layout both they and
// netns/cni write.
export function masqueradeListing(ruleLines: readonly string[]): string {
  return [
    'table inet cni_plugins_masquerade {',
    '\tcomment "Masquerading for plugins from github.com/containernetworking/plugins"',
    '\tchain masq_checks {',
    '\t\tcomment "Masquerade traffic from certain IPs to any (non-multicast) IP outside their subnet"',
    ...ruleLines.map((line) => `\t\t${line}`),
    '\t}',
    '',
    '\tchain postrouting {',
    '\t\ttype nat hook postrouting priority srcnat; policy accept;',
    '\t\tip daddr 224.0.0.0/4 return',
    '\t\tip6 daddr ff00::/8 return',
    '\t\tgoto masq_checks',
    '\t}',
    '}',
    '',
  ].join('\n');
}
