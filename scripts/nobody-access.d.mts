/** Why nobody (uid 65534) cannot reach `path` (one line naming the folder and the fix), or undefined if it can. */
export function nobodyCannotReach(path: string): string | undefined;
