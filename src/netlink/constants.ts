// Netlink and rtnetlink numbers this layer uses, from the kernel UAPI headers
// (linux/netlink.h, linux/rtnetlink.h, linux/if_link.h, linux/if_addr.h,
// linux/neighbour.h, linux/veth.h, linux/net_namespace.h). Only what some file
// here sends or reads.

export const NETLINK_ROUTE = 0;
/** The handle closes these off the calling thread (handle.ts); nftables/ speaks it. */
export const NETLINK_NETFILTER = 12;
export const AF_UNSPEC = 0;
export const AF_INET = 2;
export const AF_INET6 = 10;

// nlmsghdr / nlattr
export const NLMSG_HDRLEN = 16;
export const NLA_HDRLEN = 4;
export const NLA_F_NESTED = 0x8000;
export const NLA_F_NET_BYTEORDER = 0x4000;
export const NLA_TYPE_MASK = ~(NLA_F_NESTED | NLA_F_NET_BYTEORDER) & 0xffff;

export const NLM_F_REQUEST = 0x1;
export const NLM_F_MULTI = 0x2;
export const NLM_F_ACK = 0x4;
export const NLM_F_ECHO = 0x8;
export const NLM_F_DUMP_INTR = 0x10;
export const NLM_F_DUMP = 0x300;
export const NLM_F_REPLACE = 0x100;
export const NLM_F_EXCL = 0x200;
export const NLM_F_CREATE = 0x400;
export const NLM_F_APPEND = 0x800;
// Flags of an NLMSG_ERROR / NLMSG_DONE
export const NLM_F_CAPPED = 0x100;
export const NLM_F_ACK_TLVS = 0x200;

export const NLMSG_NOOP = 1;
export const NLMSG_ERROR = 2;
export const NLMSG_DONE = 3;

export const NLMSGERR_ATTR_MSG = 1;
export const NLMSGERR_ATTR_OFFS = 2;
/** int error + the original nlmsghdr. */
export const NLMSGERR_SIZE = 20;

// rtnetlink message types
/** The first rtnetlink message type: those below are netlink's own (NOOP, ERROR, DONE, OVERRUN). */
export const RTM_BASE = 16;
export const RTM_NEWLINK = 16;
export const RTM_DELLINK = 17;
export const RTM_GETLINK = 18;
export const RTM_NEWADDR = 20;
export const RTM_DELADDR = 21;
export const RTM_GETADDR = 22;
export const RTM_NEWROUTE = 24;
export const RTM_DELROUTE = 25;
export const RTM_GETROUTE = 26;
export const RTM_NEWNEIGH = 28;
export const RTM_DELNEIGH = 29;
export const RTM_GETNEIGH = 30;
export const RTM_NEWNSID = 88;
export const RTM_GETNSID = 90;

// Fixed headers
export const IFINFOMSG_SIZE = 16;
export const IFADDRMSG_SIZE = 8;
export const RTMSG_SIZE = 12;
export const NDMSG_SIZE = 12;
/** struct rtgenmsg: u8 family (padded to 4 on the wire). */
export const RTGENMSG_SIZE = 1;
export const RTNEXTHOP_SIZE = 8;

// IFLA_*
export const IFLA_ADDRESS = 1;
export const IFLA_IFNAME = 3;
export const IFLA_MTU = 4;
export const IFLA_LINK = 5;
export const IFLA_MASTER = 10;
export const IFLA_TXQLEN = 13;
export const IFLA_OPERSTATE = 16;
export const IFLA_LINKINFO = 18;
export const IFLA_NET_NS_FD = 28;
export const IFLA_LINK_NETNSID = 37;
export const IFLA_INFO_KIND = 1;
export const IFLA_INFO_DATA = 2;
export const VETH_INFO_PEER = 1;
export const IFLA_VLAN_ID = 1;
export const IFLA_MACVLAN_MODE = 1;
export const IFLA_IPVLAN_MODE = 1;
export const IFLA_IPVLAN_FLAGS = 2;

// net/if.h flags
export const IFF_UP = 0x1;

// IFA_*
export const IFA_ADDRESS = 1;
export const IFA_LOCAL = 2;
export const IFA_LABEL = 3;
export const IFA_BROADCAST = 4;
export const IFA_CACHEINFO = 6;
export const IFA_FLAGS = 8;
export const INFINITY_LIFE_TIME = 0xffffffff;

// RTA_*
export const RTA_DST = 1;
export const RTA_OIF = 4;
export const RTA_GATEWAY = 5;
export const RTA_PRIORITY = 6;
export const RTA_PREFSRC = 7;
export const RTA_METRICS = 8;
export const RTA_MULTIPATH = 9;
export const RTA_TABLE = 15;
export const RTNH_F_ONLINK = 4;
export const RTM_F_CLONED = 0x200;
// RTAX_*: u32s nested in RTA_METRICS
export const RTAX_MTU = 2;
export const RTAX_ADVMSS = 8;

export const RT_SCOPE_UNIVERSE = 0;
export const RT_SCOPE_LINK = 253;
export const RT_SCOPE_HOST = 254;
export const RT_SCOPE_NOWHERE = 255;
export const RT_TABLE_UNSPEC = 0;
export const RT_TABLE_MAIN = 254;
export const RTPROT_BOOT = 3;
export const RTN_UNICAST = 1;

// NDA_*
export const NDA_DST = 1;
export const NDA_LLADDR = 2;
export const NUD_PERMANENT = 0x80;
export const NDA_IFINDEX = 8;
// NTF_* (ndm_flags)
export const NTF_USE = 0x01;
export const NTF_SELF = 0x02;
export const NTF_MASTER = 0x04;
export const NTF_PROXY = 0x08;
export const NTF_EXT_LEARNED = 0x10;
export const NTF_OFFLOADED = 0x20;
export const NTF_STICKY = 0x40;
export const NTF_ROUTER = 0x80;

// NETNSA_* (RTM_NEWNSID / GETNSID)
export const NETNSA_NSID = 1;
export const NETNSA_PID = 2;
export const NETNSA_FD = 3;
export const NETNSA_TARGET_NSID = 4;
export const NETNSA_CURRENT_NSID = 5;
/** NETNSA_NSID's value for "none": a reply's, and a request's for "pick one". */
export const NETNSA_NSID_NOT_ASSIGNED = -1;
