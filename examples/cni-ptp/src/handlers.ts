// The plugin's handlers and what it says of itself, for both entries: main.ts
// (one process per call) and daemon.ts (resident). Each command's code is
// imported when that command first runs.
import { SPEC_VERSIONS, type PluginFunctions, type PluginInfo } from 'netns/cni';
import type { PtpConf } from './config.js';

export const handlers: PluginFunctions<PtpConf> = {
  add: async (args) => (await import('./add.js')).cmdAdd(args),
  del: async (args) => (await import('./del.js')).cmdDel(args),
  check: async (args) => (await import('./check.js')).cmdCheck(args),
  gc: async (args) => (await import('./gc.js')).cmdGc(args),
  status: async (args) => (await import('./status.js')).cmdStatus(args),
};

export const info: PluginInfo = { versions: SPEC_VERSIONS, about: 'CNI plugin cni-ptp (netns example): ptp with an address set per attachment' };
