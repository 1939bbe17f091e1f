// STATUS (spec 1.1): ready when the IPAM plugin is (forwarded when it speaks
// 1.1.0; otherwise it is found and answers VERSION) and netlink opens in the
// host namespace.
import { CniCode, CniError, execStatus, type CmdArgs } from 'netns/cni';
import { openNetlink } from 'netns/netlink';
import type { PtpConf } from './config.js';
import { ipamSpeaks } from './ipam-support.js';

export async function cmdStatus(args: CmdArgs<PtpConf>): Promise<void> {
  if (await ipamSpeaks(args, '1.1.0')) await execStatus(args);
  try {
    using nl = await openNetlink(args.hostNs);
    await nl.links.get('lo');
  } catch (error) {
    throw new CniError(CniCode.PLUGIN_NOT_AVAILABLE, `plugin not available: ${(error as Error).message}`);
  }
}
