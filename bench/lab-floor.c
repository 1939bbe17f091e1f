// The lab benchmark's kernel floor: bench/lab-topology.js's plan built and torn
// down by one C process over raw rtnetlink, with nothing between the kernel
// and the plan. Namespaces are made as `ip netns add` makes them (unshare, a
// bind mount in /run/netns) on two threads, as createLab makes them on the
// addon's; each keeps the netlink socket it opened while inside. Then every
// step, in plan order from the main thread, one request and its ACK at a time
// (interface indexes looked up by name first, as ip does); teardown is a lazy
// unmount and unlink per namespace, as `ip netns del`.
// Usage: lab-floor PLAN. Prints "built" once built, waits for a line on stdin
// (the caller may check the lab), tears down, then prints
// {"buildMs":…,"teardownMs":…}. The plan's lines (bench/lab-ip.js writes it):
//   node NAME                      a namespace, /run/netns/NAME
//   bridge NODE                    br0 in NODE, up
//   veth NODE IF PEER PEERIF M     a pair made in NODE, that end up (M=1: enslaved to br0), the peer in PEER
//   up NODE IF M                   the end made elsewhere up (M=1: enslaved to br0)
//   addr NODE IF A.B.C.D/LEN
//   route NODE DEST/LEN|default GATEWAY IF
//   forward NODE                   net.ipv4.ip_forward=1
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RUN_DIR "/run/netns"
#define MAX_NODES 2048
#define THREADS 2

struct node {
  char name[64];
  int ns;  // the namespace's descriptor
  int nl;  // a NETLINK_ROUTE socket made inside it
};

static struct node nodes[MAX_NODES];
static int node_count;
static atomic_int next_to_make;

static void die(const char *what, const char *detail) {
  fprintf(stderr, "lab-floor: %s %s: %s\n", what, detail, strerror(errno));
  exit(1);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static struct node *node_named(const char *name) {
  for (int i = 0; i < node_count; i++)
    if (strcmp(nodes[i].name, name) == 0) return &nodes[i];
  fprintf(stderr, "lab-floor: no node %s in the plan\n", name);
  exit(1);
}

// As ip does once: the run directory a shared mount, bound onto itself first if it is none.
static void share_run_dir(void) {
  mkdir(RUN_DIR, 0755);
  if (mount("", RUN_DIR, "none", MS_SHARED | MS_REC, NULL) == 0) return;
  if (mount(RUN_DIR, RUN_DIR, "none", MS_BIND | MS_REC, NULL) != 0 || mount("", RUN_DIR, "none", MS_SHARED | MS_REC, NULL) != 0) die("mount", RUN_DIR);
}

// One thread's share of the namespaces: unshare, bind, open, then home again.
static void *make_namespaces(void *unused) {
  (void)unused;
  int home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (home < 0) die("open", "/proc/thread-self/ns/net");
  for (int i; (i = atomic_fetch_add(&next_to_make, 1)) < node_count;) {
    struct node *n = &nodes[i];
    char path[128], self[64];
    snprintf(path, sizeof path, RUN_DIR "/%s", n->name);
    int point = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
    if (point < 0) die("create", path);
    close(point);
    if (unshare(CLONE_NEWNET) != 0) die("unshare", n->name);
    snprintf(self, sizeof self, "/proc/self/task/%d/ns/net", gettid());
    if (mount(self, path, "none", MS_BIND, NULL) != 0) die("mount", path);
    n->ns = open(path, O_RDONLY | O_CLOEXEC);
    n->nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (n->ns < 0 || n->nl < 0) die("open in", n->name);
    if (setns(home, CLONE_NEWNET) != 0) die("setns home from", n->name);
  }
  close(home);
  return NULL;
}

struct request {
  struct nlmsghdr h;
  char body[1024];
};

static void *tail(struct request *r) { return (char *)r + NLMSG_ALIGN(r->h.nlmsg_len); }

static void add_attr(struct request *r, unsigned short type, const void *data, size_t len) {
  struct rtattr *a = tail(r);
  a->rta_type = type;
  a->rta_len = RTA_LENGTH(len);
  if (len) memcpy(RTA_DATA(a), data, len);
  r->h.nlmsg_len = NLMSG_ALIGN(r->h.nlmsg_len) + RTA_ALIGN(a->rta_len);
}

static struct rtattr *begin_nest(struct request *r, unsigned short type) {
  struct rtattr *a = tail(r);
  add_attr(r, type, NULL, 0);
  return a;
}

static void end_nest(struct request *r, struct rtattr *a) { a->rta_len = (char *)tail(r) - (char *)a; }

static void start(struct request *r, unsigned short type, unsigned short flags, size_t header) {
  memset(r, 0, sizeof *r);
  r->h.nlmsg_len = NLMSG_LENGTH(header);
  r->h.nlmsg_type = type;
  r->h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
}

// Sends one request and reads its answer: the ACK, or (for a GET) the reply, whose index it returns.
static int transact(struct node *n, struct request *r, const char *what) {
  static unsigned seq;
  r->h.nlmsg_seq = ++seq;
  if (send(n->nl, r, r->h.nlmsg_len, 0) < 0) die(what, n->name);
  int index = 0;
  for (;;) {
    char buf[8192];
    ssize_t got = recv(n->nl, buf, sizeof buf, 0);
    if (got < 0) die(what, n->name);
    for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (unsigned)got); h = NLMSG_NEXT(h, got)) {
      if (h->nlmsg_type == NLMSG_ERROR) {
        int error = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
        if (error != 0) {
          errno = -error;
          die(what, n->name);
        }
        return index;
      }
      if (h->nlmsg_type == RTM_NEWLINK) index = ((struct ifinfomsg *)NLMSG_DATA(h))->ifi_index;
    }
  }
}

static int index_of(struct node *n, const char *ifname) {
  struct request r;
  start(&r, RTM_GETLINK, 0, sizeof(struct ifinfomsg));
  add_attr(&r, IFLA_IFNAME, ifname, strlen(ifname) + 1);
  return transact(n, &r, "get link");
}

// `ip link set IF up [master br0]`, or with `kind` the link made: `ip link add IF [master br0] up type KIND`.
static void link_request(struct request *r, int create, const char *ifname, int master) {
  start(r, RTM_NEWLINK, create ? NLM_F_CREATE | NLM_F_EXCL : 0, sizeof(struct ifinfomsg));
  struct ifinfomsg *ifi = NLMSG_DATA(&r->h);
  ifi->ifi_flags = ifi->ifi_change = IFF_UP;
  add_attr(r, IFLA_IFNAME, ifname, strlen(ifname) + 1);
  if (master) add_attr(r, IFLA_MASTER, &master, sizeof master);
}

static void add_bridge(struct node *n) {
  struct request r;
  link_request(&r, 1, "br0", 0);
  struct rtattr *info = begin_nest(&r, IFLA_LINKINFO);
  add_attr(&r, IFLA_INFO_KIND, "bridge", 6);
  end_nest(&r, info);
  transact(n, &r, "add bridge in");
}

static void add_veth(struct node *n, const char *ifname, struct node *peer, const char *peer_ifname, int enslave) {
  struct request r;
  link_request(&r, 1, ifname, enslave ? index_of(n, "br0") : 0);
  struct rtattr *info = begin_nest(&r, IFLA_LINKINFO);
  add_attr(&r, IFLA_INFO_KIND, "veth", 4);
  struct rtattr *data = begin_nest(&r, IFLA_INFO_DATA);
  struct rtattr *peer_info = begin_nest(&r, VETH_INFO_PEER);
  r.h.nlmsg_len += sizeof(struct ifinfomsg);  // the peer's (zeroed) ifinfomsg
  add_attr(&r, IFLA_IFNAME, peer_ifname, strlen(peer_ifname) + 1);
  add_attr(&r, IFLA_NET_NS_FD, &peer->ns, sizeof peer->ns);
  end_nest(&r, peer_info);
  end_nest(&r, data);
  end_nest(&r, info);
  transact(n, &r, "add veth in");
}

static void set_up(struct node *n, const char *ifname, int enslave) {
  struct request r;
  link_request(&r, 0, ifname, enslave ? index_of(n, "br0") : 0);
  transact(n, &r, "set link up in");
}

static void add_address(struct node *n, const char *ifname, const char *cidr) {
  char address[64];
  int length = 0;
  sscanf(cidr, "%63[^/]/%d", address, &length);
  struct request r;
  start(&r, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, sizeof(struct ifaddrmsg));
  struct ifaddrmsg *ifa = NLMSG_DATA(&r.h);
  ifa->ifa_family = AF_INET;
  ifa->ifa_prefixlen = length;
  ifa->ifa_index = index_of(n, ifname);
  struct in_addr local;
  if (inet_pton(AF_INET, address, &local) != 1) die("parse address", cidr);
  add_attr(&r, IFA_LOCAL, &local, sizeof local);
  add_attr(&r, IFA_ADDRESS, &local, sizeof local);
  transact(n, &r, "add address in");
}

static void add_route(struct node *n, const char *to, const char *via, const char *ifname) {
  struct request r;
  start(&r, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, sizeof(struct rtmsg));
  struct rtmsg *rt = NLMSG_DATA(&r.h);
  rt->rtm_family = AF_INET;
  rt->rtm_table = RT_TABLE_MAIN;
  rt->rtm_protocol = RTPROT_BOOT;
  rt->rtm_scope = RT_SCOPE_UNIVERSE;
  rt->rtm_type = RTN_UNICAST;
  if (strcmp(to, "default") != 0) {
    char destination[64];
    int length = 0;
    sscanf(to, "%63[^/]/%d", destination, &length);
    struct in_addr dst;
    if (inet_pton(AF_INET, destination, &dst) != 1) die("parse route", to);
    rt->rtm_dst_len = length;
    add_attr(&r, RTA_DST, &dst, sizeof dst);
  }
  struct in_addr gateway;
  if (inet_pton(AF_INET, via, &gateway) != 1) die("parse gateway", via);
  add_attr(&r, RTA_GATEWAY, &gateway, sizeof gateway);
  int oif = index_of(n, ifname);
  add_attr(&r, RTA_OIF, &oif, sizeof oif);
  transact(n, &r, "add route in");
}

// /proc/sys/net is the namespace of whoever opens it: open it from inside.
static void forward(struct node *n) {
  int home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (home < 0 || setns(n->ns, CLONE_NEWNET) != 0) die("setns into", n->name);
  int fd = open("/proc/sys/net/ipv4/ip_forward", O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, "1", 1) != 1) die("ip_forward in", n->name);
  close(fd);
  if (setns(home, CLONE_NEWNET) != 0) die("setns home from", n->name);
  close(home);
}

static void run_step(const char *line) {
  char kind[16], node[64], x[64], y[64], z[64];
  int m = 0;
  if (sscanf(line, "%15s %63s %63s %63s %63s %d", kind, node, x, y, z, &m) < 2) return;
  if (strcmp(kind, "bridge") == 0) add_bridge(node_named(node));
  else if (strcmp(kind, "veth") == 0) add_veth(node_named(node), x, node_named(y), z, m);
  else if (strcmp(kind, "up") == 0) set_up(node_named(node), x, atoi(y));
  else if (strcmp(kind, "addr") == 0) add_address(node_named(node), x, y);
  else if (strcmp(kind, "route") == 0) add_route(node_named(node), x, y, z);
  else if (strcmp(kind, "forward") == 0) forward(node_named(node));
  else if (strcmp(kind, "node") != 0) {
    fprintf(stderr, "lab-floor: unknown step %s", line);
    exit(1);
  }
}

static void teardown(void) {
  for (int i = 0; i < node_count; i++) {
    char path[128];
    snprintf(path, sizeof path, RUN_DIR "/%s", nodes[i].name);
    close(nodes[i].nl);
    close(nodes[i].ns);
    if (umount2(path, MNT_DETACH) != 0 || unlink(path) != 0) die("delete", path);
  }
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: lab-floor PLAN\n");
    return 2;
  }
  FILE *plan = fopen(argv[1], "r");
  if (!plan) die("open", argv[1]);
  char line[256];
  static char steps[1 << 13][256];  // the plan, read before the clock starts
  int step_count = 0;
  while (fgets(line, sizeof line, plan) && step_count < (1 << 13)) {
    if (sscanf(line, "node %63s", nodes[node_count].name) == 1 && ++node_count == MAX_NODES) die("too many nodes in", argv[1]);
    snprintf(steps[step_count++], sizeof steps[0], "%s", line);
  }
  fclose(plan);

  double started = now_ms();
  share_run_dir();
  pthread_t threads[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&threads[i], NULL, make_namespaces, NULL);
  for (int i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);
  for (int i = 0; i < step_count; i++) run_step(steps[i]);
  double built = now_ms();

  printf("built\n");
  fflush(stdout);
  fgets(line, sizeof line, stdin);
  double tearing = now_ms();
  teardown();
  printf("{\"buildMs\":%.3f,\"teardownMs\":%.3f}\n", built - started, now_ms() - tearing);
  return 0;
}
