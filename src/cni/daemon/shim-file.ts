// The shim's executable as the package builds it (binding.gyp's netns-cni-shim),
// for an installer to copy under the plugin's name.
import { installedFile, type RuntimeFile } from '../../core/runtime-files.js';

const SHIM: RuntimeFile = {
  what: 'CNI shim',
  name: 'netns-cni-shim',
  installed: ['build/Release/netns-cni-shim', 'build/Debug/netns-cni-shim'],
  builtAtInstall: true,
};

/** The installed package's shim (ERR_NETNS_ADDON_MISSING if it was not built). */
export function shimPath(): string {
  return installedFile(SHIM);
}
