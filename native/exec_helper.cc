// netns-exec: the small program NetNS.spawn runs. It inherits the namespace as
// fd 3 and a close-on-exec status pipe as fd 4, switches, optionally sets up
// what `ip netns exec` adds (a private mount namespace with /etc/netns/NAME/*
// bound over /etc and /sys remounted), and execs the command. Failures are
// reported on the status pipe as "<stage> <errno>" so that the parent can turn
// them into proper errors instead of guessing from an exit code.
//
// usage: netns-exec ETC_NAME|- COMMAND [ARGS...]
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

constexpr int kNamespaceFd = 3;
constexpr int kStatusFd = 4;

[[noreturn]] void Report(const char* stage, int err) {
  char line[64];
  int len = snprintf(line, sizeof line, "%s %d\n", stage, err);
  if (write(kStatusFd, line, static_cast<size_t>(len)) < 0) {
    // nothing more can be said; the exit code still tells the parent
  }
  _exit(127);
}

void RemountSys(const char* name) {
  struct statvfs fs;
  unsigned long flags = 0;
  if (statvfs("/sys", &fs) == 0 && (fs.f_flag & ST_RDONLY)) flags = MS_RDONLY;
  if (umount2("/sys", MNT_DETACH) != 0) Report("umount-sys", errno);
  if (mount(name, "/sys", "sysfs", flags, nullptr) != 0) Report("mount-sys", errno);
}

void BindEtc(const char* name) {
  std::string dir = std::string("/etc/netns/") + name;
  DIR* entries = opendir(dir.c_str());
  if (entries == nullptr) return;  // nothing to overlay, as with ip netns exec
  while (dirent* entry = readdir(entries)) {
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
    std::string from = dir + "/" + entry->d_name;
    std::string to = std::string("/etc/") + entry->d_name;
    if (mount(from.c_str(), to.c_str(), "none", MS_BIND, nullptr) != 0) Report("bind-etc", errno);
  }
  closedir(entries);
}

void PrivateMounts(const char* name) {
  if (unshare(CLONE_NEWNS) != 0) Report("unshare", errno);
  if (mount("", "/", "none", MS_SLAVE | MS_REC, nullptr) != 0) Report("mount-slave", errno);
  RemountSys(name);
  BindEtc(name);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: netns-exec ETC_NAME|- COMMAND [ARGS...]\n");
    return 2;
  }
  if (fcntl(kStatusFd, F_SETFD, FD_CLOEXEC) != 0) Report("status-pipe", errno);
  if (setns(kNamespaceFd, CLONE_NEWNET) != 0) Report("setns", errno);
  close(kNamespaceFd);
  if (strcmp(argv[1], "-") != 0) PrivateMounts(argv[1]);
  execvp(argv[2], argv + 2);
  Report("exec", errno);
}
