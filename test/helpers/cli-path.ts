// The `netns` command as npm installs it: the file package.json's bin names.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const { bin } = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { bin: { netns: string } };

export const CLI_PATH = `${root}${bin.netns.replace(/^\.\//, '')}`;
