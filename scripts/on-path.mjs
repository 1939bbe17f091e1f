// Whether a command can be run: a path, or a name found executable on PATH.
// The install script and the prebuild script look for their tools with it.
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

export function onPath(command) {
  if (isAbsolute(command)) return canRun(command);
  return (process.env.PATH ?? '').split(delimiter).filter(Boolean).some((dir) => canRun(join(dir, command)));
}

function canRun(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
