// podman 4.3 as this VM runs it (shared/reference/cni-craft.md): the CNI
// backend, runc, cgroupfs and low nofile/nproc limits, with everything it
// keeps (storage, run state, network configurations) in one folder of the
// caller's, and a busybox image imported from Debian's busybox-static so that
// no registry is needed. Plain JavaScript: the podman test and
// bench/cni-podman.js share it.
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { installShim } from './cni-shim.mjs';

export const havePodman = existsSync('/usr/bin/podman') && existsSync('/usr/sbin/runc') && existsSync('/bin/busybox');

const run = promisify(execFile);

/** containers.conf for `dir`: CNI backend looking in `pluginDir` first, runc, cgroupfs, low limits. */
function containersConf(dir, pluginDir) {
  const file = join(dir, 'containers.conf');
  writeFileSync(
    file,
    [
      '[containers]',
      'default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]',
      '[network]',
      'network_backend = "cni"',
      `cni_plugin_dirs = [${JSON.stringify(pluginDir)}, "/usr/lib/cni"]`,
      `network_config_dir = ${JSON.stringify(join(dir, 'net'))}`,
      '[engine]',
      'cgroup_manager = "cgroupfs"',
      'runtime = "runc"',
      'events_logger = "none"',
    ].join('\n'),
  );
  return file;
}

/**
 * A podman whose state is all in `dir`, finding CNI plugins in `pluginDir`
 * before /usr/lib/cni: a function of podman's arguments. `env` adds to its
 * environment (the plugins inherit it); `exec` runs it (node's execFile by
 * default; a NetNS's execFile runs podman, and so its networking, there).
 */
export function confinedPodman(dir, { pluginDir, env = {}, exec = run }) {
  mkdirSync(join(dir, 'net'), { recursive: true });
  const fullEnv = { ...process.env, ...env, CONTAINERS_CONF: containersConf(dir, pluginDir) };
  const state = ['--root', join(dir, 'root'), '--runroot', join(dir, 'runroot'), '--tmpdir', join(dir, 'tmp')];
  return (...args) => exec('podman', [...state, ...args], { env: fullEnv }); // node's execFile reads UTF-8 text by default, as a NetNS's does
}

/** Writes the network `name` (a conflist of `plugins`) where the podman of `dir` reads networks. */
export function writeNetwork(dir, name, plugins) {
  writeFileSync(join(dir, 'net', `${name}.conflist`), JSON.stringify({ cniVersion: '1.0.0', name, plugins }));
}

/**
 * The cni-ptp example in `pluginDir` under both its names: `cni-ptp` (one
 * process per call, `plugin`) and `residentName` (the shim). The shim finds
 * its daemon at NETNS_CNI_SOCKET, else /run/netns-cni/<residentName>.sock;
 * only the latter reaches the DEL of a container that exits by itself:
 * podman runs that DEL from conmon's exit command, which does not pass
 * NETNS_CNI_SOCKET on.
 */
export function installCniPtp(pluginDir, plugin, residentName = 'cni-ptp-resident') {
  symlinkSync(plugin, join(pluginDir, 'cni-ptp'));
  installShim(pluginDir, residentName);
}

/** Imports `image`: busybox with `tools` linked to it and `files` (path in the image: content). */
export async function importBusybox(podman, dir, image, tools, files = {}) {
  const rootfs = join(dir, 'rootfs');
  mkdirSync(join(rootfs, 'bin'), { recursive: true });
  copyFileSync('/bin/busybox', join(rootfs, 'bin', 'busybox'));
  for (const tool of tools) symlinkSync('busybox', join(rootfs, 'bin', tool));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(rootfs, path, '..'), { recursive: true });
    writeFileSync(join(rootfs, path), content);
  }
  await run('tar', ['-C', rootfs, '-cf', join(dir, 'image.tar'), '.']);
  await podman('import', join(dir, 'image.tar'), image);
}

/** Removes every container (their DELs run), then podman's state (images, networks, storage) and `dir`. */
export async function removePodman(podman, dir) {
  await podman('rm', '-a', '-f', '-t', '0').catch(() => {});
  await podman('system', 'reset', '-f').catch(() => {});
  rmSync(dir, { recursive: true, force: true });
}
