// What the demo needs before it starts: privileges. Missing ones stop it at
// once, with a message saying how to run it. No tool is needed: links,
// addresses and lo are made over rtnetlink, address sets and the rule that
// references one over nf_tables netlink (neither `ip` nor `nft`).
import { hasEffectiveCapability } from '../capabilities.js';

export interface Preflight {
  /** Problems that stop the demo, each with what to do about it. */
  problems: string[];
}

export function preflight(): Preflight {
  const problems: string[] = [];
  for (const name of ['CAP_SYS_ADMIN', 'CAP_NET_ADMIN'] as const) {
    if (!hasEffectiveCapability(name)) problems.push(`${name} is missing: run it as root, e.g. \`sudo npm start\``);
  }
  return { problems };
}
