/*
 * netns-exec: the small program NetNS.spawn runs. It inherits the namespace as
 * fd 3 and a close-on-exec status pipe as fd 4, switches, optionally sets up
 * what `ip netns exec` adds (a private mount namespace with the entries of
 * /etc/netns/NAME bound over /etc and /sys remounted), optionally a UTS
 * namespace of the command's own with a hostname of its own (a lab's node
 * named as the node: the namespace dies with the command and its children,
 * so nothing is left to remove), optionally directories of its own laid over
 * paths in that mount namespace (a lab node's private /var/log or /etc: a
 * folder bound, or an overlay whose changes go to a folder), and execs the
 * command. Failures are
 * reported on the status pipe as "<stage> <errno>" so that the parent can turn
 * them into proper errors instead of guessing from an exit code. What is fatal
 * and what is only warned about follows iproute2 (lib/namespace.c).
 *
 * Plain C, linked statically: it runs once per spawn, so its start-up cost is
 * on every child's critical path.
 *
 * usage: netns-exec ETC_NAME|- HOSTNAME COUNT [KIND SOURCE PATH]... DEATH_SIGNAL PARENT_PID COMMAND [ARGS...]
 * (HOSTNAME empty: the machine's; COUNT mounts, KIND bind or overlay; DEATH_SIGNAL 0: none)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "helper_status.h"

enum { NAMESPACE_FD = 3, STATUS_FD = 4 };

/*
 * As iproute2's netns_switch: a failed unmount of /sys is not an error (there
 * may be no sysfs there, or it may be locked); the new sysfs is then laid over
 * it, read-only if the old one is. Failing to mount the new sysfs is an error.
 */
static void remount_sys(const char *name) {
  struct statvfs fs;
  unsigned long flags = 0;
  if (umount2("/sys", MNT_DETACH) != 0 && statvfs("/sys", &fs) == 0 && (fs.f_flag & ST_RDONLY)) flags = MS_RDONLY;
  if (mount(name, "/sys", "sysfs", flags, NULL) != 0) report("mount-sys", errno);
}

/*
 * As iproute2's bind_etc: each entry of /etc/netns/NAME is bound over its
 * namesake in /etc; one that cannot be bound (say /etc has no such file) is
 * reported on stderr and skipped, and the command still runs.
 */
static void bind_etc(const char *name) {
  char dir[PATH_MAX], from[PATH_MAX], to[PATH_MAX];
  if (strlen(name) >= NAME_MAX) return;
  if (snprintf(dir, sizeof dir, "/etc/netns/%s", name) >= (int)sizeof dir) return;
  DIR *entries = opendir(dir);
  if (entries == NULL) return; /* nothing to overlay, as with ip netns exec */
  struct dirent *entry;
  while ((entry = readdir(entries)) != NULL) {
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
    if (snprintf(from, sizeof from, "%s/%s", dir, entry->d_name) >= (int)sizeof from ||
        snprintf(to, sizeof to, "/etc/%s", entry->d_name) >= (int)sizeof to) {
      fprintf(stderr, "Bind %s/%s -> /etc/%s failed: %s\n", dir, entry->d_name, entry->d_name, strerror(ENAMETOOLONG));
      continue;
    }
    if (mount(from, to, "none", MS_BIND, NULL) != 0) fprintf(stderr, "Bind %s -> %s failed: %s\n", from, to, strerror(errno));
  }
  closedir(entries);
}

static void private_mount_namespace(void) {
  if (unshare(CLONE_NEWNS) != 0) report("unshare", errno);
  if (mount("", "/", "none", MS_SLAVE | MS_REC, NULL) != 0) report("mount-slave", errno);
}

/*
 * One directory of the node's own over `path`: SOURCE bound, or an overlay
 * whose lower layer is what `path` holds now and whose changes go to
 * SOURCE/upper (SOURCE/work is overlayfs's). Asked for, so a failure is fatal.
 */
static void lay_dir(const char *kind, const char *source, const char *path) {
  char options[3 * PATH_MAX + 64];
  if (strcmp(kind, "bind") == 0) {
    if (mount(source, path, NULL, MS_BIND | MS_REC, NULL) != 0) report("mount-dir", errno);
    return;
  }
  if (snprintf(options, sizeof options, "lowerdir=%s,upperdir=%s/upper,workdir=%s/work", path, source, source) >= (int)sizeof options) report("mount-dir", ENAMETOOLONG);
  if (mount("overlay", path, "overlay", 0, options) != 0) report("mount-dir", errno);
}

/* The kernel refuses a name over HOST_NAME_MAX (64) with EINVAL; the caller checks it first to say so plainly. */
static void own_hostname(const char *hostname) {
  if (unshare(CLONE_NEWUTS) != 0) report("unshare-uts", errno);
  if (sethostname(hostname, strlen(hostname)) != 0) report("sethostname", errno);
}

static int usage(void) {
  fprintf(stderr, "usage: netns-exec ETC_NAME|- HOSTNAME COUNT [KIND SOURCE PATH]... DEATH_SIGNAL PARENT_PID COMMAND [ARGS...]\n");
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 7) return usage();
  int mounts = atoi(argv[3]);
  char **dirs = argv + 4, **rest = dirs + 3 * mounts;
  if (mounts < 0 || mounts > (argc - 7) / 3) return usage();
  status_open(STATUS_FD);
  die_with_parent(atoi(rest[0]), (pid_t)atol(rest[1]));
  if (setns(NAMESPACE_FD, CLONE_NEWNET) != 0) report("setns", errno);
  close(NAMESPACE_FD);
  int etc = strcmp(argv[1], "-") != 0;
  if (etc || mounts > 0) private_mount_namespace();
  for (int i = 0; i < mounts; i++) lay_dir(dirs[3 * i], dirs[3 * i + 1], dirs[3 * i + 2]);
  /* after the node's own directories: a private /etc gets the namespace's /etc/netns files too */
  if (etc) {
    remount_sys(argv[1]);
    bind_etc(argv[1]);
  }
  if (argv[2][0] != '\0') own_hostname(argv[2]);
  execvp(rest[2], rest + 2);
  report("exec", errno);
}
