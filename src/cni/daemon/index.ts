// Resident mode: a daemon serving a plugin's handlers to the shim installed
// as the plugin binary (native/cni_shim.c). docs/cni.md, "Resident mode".
export { serveResident } from './server.js';
export type { ResidentOptions, ResidentServer } from './server.js';
export { shimPath } from './shim-file.js';
