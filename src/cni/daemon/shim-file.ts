// The shim's executable as the package builds it (binding.gyp's netns-cni-shim),
// for an installer to copy under the plugin's name. It is beside the addon the
// package loads: in build/Release, or in the prebuild folder the package ships.
import { besideAddon, installedFile, type RuntimeFile } from '../../core/runtime-files.js';

const SHIM: RuntimeFile = {
  what: 'CNI shim',
  name: 'netns-cni-shim',
  installed: besideAddon('netns-cni-shim'),
  builtAtInstall: true,
};

/** The installed package's shim (ERR_NETNS_ADDON_MISSING if it was not built). */
export function shimPath(): string {
  return installedFile(SHIM);
}
