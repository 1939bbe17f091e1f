#!/usr/bin/env node
// cni-ptp: the official ptp plugin's job on netns, with an address set per
// attachment. A runtime runs it with CNI_* variables and the configuration on
// stdin; pluginMain checks both and prints what the spec says. Each command's
// code is imported when that command runs: VERSION loads nothing more. No
// top-level await, so that it can also be bundled as CommonJS into one
// executable (docs/cni-packaging.md).
import { pluginMain, SPEC_VERSIONS } from 'netns/cni';
import type { PtpConf } from './config.js';

void pluginMain<PtpConf>(
  {
    add: async (args) => (await import('./add.js')).cmdAdd(args),
    del: async (args) => (await import('./del.js')).cmdDel(args),
    check: async (args) => (await import('./check.js')).cmdCheck(args),
    gc: async (args) => (await import('./gc.js')).cmdGc(args),
    status: async (args) => (await import('./status.js')).cmdStatus(args),
  },
  { versions: SPEC_VERSIONS, about: 'CNI plugin cni-ptp (netns example): ptp with an address set per attachment' },
);
