#!/usr/bin/env -S node --min-semi-space-size=16
// cni-ptp: the official ptp plugin's job on netns, with an address set per
// attachment. A runtime runs it with CNI_* variables and the configuration on
// stdin; pluginMain checks both and prints what the spec says. Each command's
// code is imported when that command runs: VERSION loads nothing more. It
// ships as one CommonJS file (scripts/build-example.mjs, docs/cni-packaging.md),
// so no top-level await. The flag lets a command's few megabytes be allocated
// without a garbage collection: two scavenges otherwise, a few ms each.
import { pluginMain } from 'netns/cni';
import { handlers, info } from './handlers.js';

void pluginMain(handlers, info);
