// Traffic-control numbers, from the kernel UAPI headers (linux/rtnetlink.h,
// linux/pkt_sched.h, linux/pkt_cls.h, linux/tc_act/tc_gact.h). Only what
// qdiscs.ts, classes.ts and filters.ts send or read.

// rtnetlink message types
export const RTM_NEWQDISC = 36;
export const RTM_DELQDISC = 37;
export const RTM_GETQDISC = 38;
export const RTM_NEWTCLASS = 40;
export const RTM_DELTCLASS = 41;
export const RTM_GETTCLASS = 42;
export const RTM_NEWTFILTER = 44;
export const RTM_DELTFILTER = 45;
export const RTM_GETTFILTER = 46;

/** struct tcmsg: u8 family, u8 pad, u16 pad, s32 ifindex, u32 handle, u32 parent, u32 info. */
export const TCMSG_SIZE = 20;

// TCA_* (every object)
export const TCA_KIND = 1;
export const TCA_OPTIONS = 2;

// Handles (TC_H_*)
export const TC_H_ROOT = 0xffffffff;
/** The ingress and clsact qdiscs' parent (TC_H_CLSACT is the same number). */
export const TC_H_INGRESS = 0xfffffff1;
export const TC_H_MIN_INGRESS = 0xfff2;
export const TC_H_MIN_EGRESS = 0xfff3;
/** The handle tc gives ingress and clsact: ffff:. */
export const INGRESS_HANDLE = 0xffff0000;

// struct tc_ratespec
export const TC_RATESPEC_SIZE = 12;
export const TC_LINKLAYER_ETHERNET = 1;
/** 256 u32 transmit times: TCA_TBF_RTAB, TCA_HTB_RTAB / CTAB. */
export const RATE_TABLE_SIZE = 1024;

// tbf
export const TCA_TBF_PARMS = 1;
export const TCA_TBF_RTAB = 2;
export const TCA_TBF_RATE64 = 4;
export const TCA_TBF_BURST = 6;
/** struct tc_tbf_qopt: rate, peakrate (tc_ratespec), u32 limit, buffer, mtu. */
export const TC_TBF_QOPT_SIZE = 36;

// htb
export const TCA_HTB_PARMS = 1;
export const TCA_HTB_INIT = 2;
export const TCA_HTB_CTAB = 3;
export const TCA_HTB_RTAB = 4;
export const TCA_HTB_RATE64 = 6;
export const TCA_HTB_CEIL64 = 7;
/** TC_HTB_PROTOVER, as tc sends it in tc_htb_glob.version. */
export const TC_HTB_PROTOVER = 3;
/** struct tc_htb_glob: u32 version, rate2quantum, defcls, debug, direct_pkts. */
export const TC_HTB_GLOB_SIZE = 20;
/** struct tc_htb_opt: rate, ceil (tc_ratespec), u32 buffer, cbuffer, quantum, level, prio. */
export const TC_HTB_OPT_SIZE = 44;

// netem
export const TCA_NETEM_REORDER = 3;
export const TCA_NETEM_CORRUPT = 4;
export const TCA_NETEM_RATE = 6;
export const TCA_NETEM_RATE64 = 8;
export const TCA_NETEM_LATENCY64 = 10;
export const TCA_NETEM_JITTER64 = 11;
/** struct tc_netem_qopt: u32 latency, limit, loss, gap, duplicate, jitter (times in ticks). */
export const TC_NETEM_QOPT_SIZE = 24;
/** struct tc_netem_rate: u32 rate, s32 packet_overhead, u32 cell_size, s32 cell_overhead. */
export const TC_NETEM_RATE_SIZE = 16;

// u32
export const TCA_U32_CLASSID = 1;
export const TCA_U32_SEL = 5;
export const TC_U32_TERMINAL = 1;
/** struct tc_u32_sel without its keys: u8 flags, offshift, nkeys, pad; u16 offmask, off; s16 offoff, hoff; u32 hmask. */
export const TC_U32_SEL_SIZE = 16;
/** struct tc_u32_key: be32 mask, be32 val, s32 off, s32 offmask. */
export const TC_U32_KEY_SIZE = 16;

// matchall and its action
export const TCA_MATCHALL_ACT = 2;
export const TCA_ACT_KIND = 1;
export const TCA_ACT_OPTIONS = 2;
export const TCA_GACT_PARMS = 2;
/** struct tc_gact (tc_gen): u32 index, capab; s32 action, refcnt, bindcnt. */
export const TC_GACT_SIZE = 20;
export const TC_ACT_SHOT = 2;

// Ethernet protocols (tcm_info's low half, network byte order)
export const ETH_P_ALL = 0x0003;
export const ETH_P_IP = 0x0800;
export const ETH_P_IPV6 = 0x86dd;
