export interface ReleaseTarget {
  platform: string;
  arch: string;
  triplet: string;
  machine: string;
}
export const RELEASE_TARGETS: ReleaseTarget[];
export const ADDON_FILE: string;
export const HELPER_FILES: string[];
export const BUILT_FILES: { built: string; shipped: string; kind: 'addon' | 'executable' }[];
export function prebuildDir(root: string, target: Pick<ReleaseTarget, 'platform' | 'arch'>): string;
export function missingFiles(root: string, target: Pick<ReleaseTarget, 'platform' | 'arch'>): string[];
export function isFresh(root: string, target: Pick<ReleaseTarget, 'platform' | 'arch'>): boolean;
export const RUNTIME_FLOOR: { GLIBC: string; GLIBCXX: string };
export function requiredVersions(dynamicSymbols: string): { GLIBC?: string; GLIBCXX?: string };
export function compareVersions(a: string, b: string): number;
