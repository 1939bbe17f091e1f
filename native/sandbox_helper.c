/*
 * netns-sandbox: the small program `netns sandbox` and spawnSandbox run. In a
 * fresh single-threaded process (a threaded one cannot unshare a user
 * namespace) it makes a new user, mount, network and PID namespace with the
 * caller mapped to root, gives the sandbox a /run and an /etc of its own (a
 * tmpfs showing the host's entries, except the namespace names' folders:
 * /run/netns, /run/netns-* and /etc/netns, which start empty and writable), a
 * sysfs of the new network namespace, lo up, and runs the command under the
 * PID namespace's first process (sandbox_init.c). No root is needed, and the
 * host's network is not changed: when the command ends, every process left in
 * the sandbox is killed and what they made goes with them.
 *
 * Failures go to the close-on-exec status pipe (fd 3) as "<stage> <errno>".
 *
 * usage: netns-sandbox DEATH_SIGNAL PARENT_PID COMMAND [ARGS...]
 * (DEATH_SIGNAL 0: none)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helper_status.h"
#include "sandbox_init.h"

enum { STATUS_FD = 3 };

static void write_file(const char *path, const char *text, const char *stage) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) report(stage, errno);
  ssize_t written = write(fd, text, strlen(text));
  int err = errno;
  close(fd);
  if (written != (ssize_t)strlen(text)) report(stage, written < 0 ? err : EIO);
}

/* The caller becomes root inside; setgroups must be denied before an unprivileged gid_map write. */
static void map_caller_to_root(uid_t uid, gid_t gid) {
  char line[64];
  snprintf(line, sizeof line, "0 %u 1\n", (unsigned)uid);
  write_file("/proc/self/uid_map", line, "uid-map");
  if (access("/proc/self/setgroups", F_OK) == 0) write_file("/proc/self/setgroups", "deny", "setgroups");
  snprintf(line, sizeof line, "0 %u 1\n", (unsigned)gid);
  write_file("/proc/self/gid_map", line, "gid-map");
}

/* Folders about the host's named namespaces (and the package's locks), which the sandbox cannot use. */
static int is_hidden(const char *name) {
  return strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, "netns") == 0 || strncmp(name, "netns-", 6) == 0;
}

/*
 * Lays `name` of the covered `dir` (open as `old`) into the new one: a
 * symbolic link is copied, anything else is bound (recursively: /run/user/UID
 * is a mount of its own) over a placeholder of the same kind.
 */
static void show_host_entry(const char *dir, int old, const char *name) {
  struct stat st;
  char from[PATH_MAX], to[PATH_MAX], target[PATH_MAX];
  if (fstatat(old, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return; /* gone since readdir */
  snprintf(from, sizeof from, "/proc/self/fd/%d/%s", old, name);
  snprintf(to, sizeof to, "%s/%s", dir, name);
  if (S_ISLNK(st.st_mode)) {
    ssize_t len = readlinkat(old, name, target, sizeof target - 1);
    if (len < 0) return;
    target[len] = '\0';
    if (symlink(target, to) != 0) report("host-entry", errno);
    return;
  }
  int made = S_ISDIR(st.st_mode) ? mkdir(to, st.st_mode & 07777) : mknod(to, S_IFREG | 0600, 0);
  if (made != 0) report("host-entry", errno);
  if (mount(from, to, NULL, MS_BIND | MS_REC, NULL) != 0) {
    fprintf(stderr, "netns sandbox: %s of the host is not shown inside: %s\n", to, strerror(errno));
  }
}

/*
 * A tmpfs over `dir` (/run, /etc) with an empty `dir`/netns, so that `ip
 * netns add`, NetNS.create and the lab can write there, which the host's
 * root owns (/etc/netns may not even exist); the host's other entries are
 * bound back in from a descriptor opened on the covered directory.
 */
static void private_copy(const char *dir) {
  char netns[PATH_MAX];
  int old = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (old < 0) report("open-host-dir", errno);
  DIR *entries = fdopendir(dup(old));
  if (entries == NULL) report("open-host-dir", errno);
  if (mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0) report("mount-tmpfs", errno);
  struct dirent *entry;
  while ((entry = readdir(entries)) != NULL) {
    if (!is_hidden(entry->d_name)) show_host_entry(dir, old, entry->d_name);
  }
  closedir(entries);
  close(old);
  snprintf(netns, sizeof netns, "%s/netns", dir);
  if (mkdir(netns, 0755) != 0) report("mkdir-netns", errno);
}

/* As `ip netns exec`: /sys/class/net shows the sandbox's devices. Without it tools see the host's, so it is only warned about. */
static void sysfs_of_sandbox(void) {
  if (mount("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) {
    fprintf(stderr, "netns sandbox: /sys still shows the host's network devices (mount sysfs: %s)\n", strerror(errno));
  }
}

static void loopback_up(void) {
  struct ifreq request;
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) report("lo-up", errno);
  memset(&request, 0, sizeof request);
  strcpy(request.ifr_name, "lo");
  if (ioctl(fd, SIOCGIFFLAGS, &request) != 0) report("lo-up", errno);
  request.ifr_flags |= IFF_UP;
  if (ioctl(fd, SIOCSIFFLAGS, &request) != 0) report("lo-up", errno);
  close(fd);
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: netns-sandbox DEATH_SIGNAL PARENT_PID COMMAND [ARGS...]\n");
    return 2;
  }
  status_open(STATUS_FD);
  uid_t uid = geteuid();
  gid_t gid = getegid();
  /* CLONE_NEWPID takes effect for the children: run_as_sandbox forks the namespace's PID 1 */
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID) != 0) report("unshare", errno);
  map_caller_to_root(uid, gid);
  /* after the new credentials: a change of credentials clears the parent-death signal */
  die_with_parent(atoi(argv[1]), (pid_t)atol(argv[2]));
  /* slave: the host's later mounts still appear; nothing made here goes back */
  if (mount("", "/", NULL, MS_SLAVE | MS_REC, NULL) != 0) report("mount-slave", errno);
  char cwd[PATH_MAX];
  int knows_cwd = getcwd(cwd, sizeof cwd) != NULL;
  private_copy("/run");
  private_copy("/etc");
  /* a working directory under /run or /etc would still be in the host's, which the tmpfs now covers */
  if (knows_cwd && chdir(cwd) != 0) {
    fprintf(stderr, "netns sandbox: %s is the host's and not shown inside; starting in /\n", cwd);
    if (chdir("/") != 0) report("chdir", errno);
  }
  sysfs_of_sandbox();
  loopback_up();
  run_as_sandbox(argv + 3, STATUS_FD);
}
