#include "nsfd.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace netns {
namespace {

std::string DescribeFsType(long magic) {
  switch (magic) {
    case TMPFS_MAGIC: return "tmpfs";
    case PROC_SUPER_MAGIC: return "procfs";
    case SYSFS_MAGIC: return "sysfs";
    case EXT4_SUPER_MAGIC: return "ext4";
    case OVERLAYFS_SUPER_MAGIC: return "overlayfs";
    case BTRFS_SUPER_MAGIC: return "btrfs";
    case XFS_SUPER_MAGIC: return "xfs";
    default: {
      char hex[32];
      snprintf(hex, sizeof hex, "fs magic 0x%lx", static_cast<unsigned long>(magic));
      return hex;
    }
  }
}

std::string DescribeFileType(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "a file";
}

std::string DescribeNsType(int type) {
  switch (type) {
    case CLONE_NEWNS: return "mnt";
    case CLONE_NEWUTS: return "uts";
    case CLONE_NEWIPC: return "ipc";
    case CLONE_NEWUSER: return "user";
    case CLONE_NEWPID: return "pid";
    case CLONE_NEWCGROUP: return "cgroup";
#ifdef CLONE_NEWTIME
    case CLONE_NEWTIME: return "time";
#endif
    default: return "unknown";
  }
}

Failure NotNetns(const std::string& what, const std::string& path) {
  return Failure::Own("ERR_NETNS_NOT_NETNS",
                      "'" + path + "' is " + what + ", not a network namespace", path);
}

}  // namespace

std::variant<NsIdentity, Failure> CheckNetnsFd(int fd, const std::string& path) {
  struct stat st;
  if (fstat(fd, &st) != 0) return Failure::Sys(errno, "fstat", path);
  struct statfs sfs;
  if (fstatfs(fd, &sfs) != 0) return Failure::Sys(errno, "fstatfs", path);
  if (sfs.f_type != NSFS_MAGIC) {
    std::string what = DescribeFileType(st.st_mode) + " on " + DescribeFsType(sfs.f_type);
    if (S_ISREG(st.st_mode) && st.st_size == 0 && sfs.f_type == TMPFS_MAGIC)
      what += " (an empty mount point: was the namespace deleted or never mounted?)";
    return NotNetns(what, path);
  }
  int type = ioctl(fd, NS_GET_NSTYPE);
  if (type < 0) return Failure::Sys(errno, "ioctl", path);
  if (type != CLONE_NEWNET) return NotNetns("a " + DescribeNsType(type) + " namespace", path);
  return NsIdentity{st.st_dev, st.st_ino};
}

std::variant<NsFd, Failure> OpenNetns(const std::string& path) {
  if (path.find('\0') != std::string::npos)
    return Failure::Own("ERR_NETNS_INVALID_PATH", "path contains a NUL byte", path);
  // O_NONBLOCK: opening a FIFO someone left at the path must not hang the caller.
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd.valid()) return Failure::Sys(errno, "open", path);
  auto checked = CheckNetnsFd(fd.get(), path);
  if (auto* failure = std::get_if<Failure>(&checked)) return *failure;
  return NsFd{std::move(fd), std::get<NsIdentity>(checked)};
}

std::variant<NsIdentity, Failure> ThreadNetns() {
  struct stat st;
  if (stat("/proc/thread-self/ns/net", &st) != 0)
    return Failure::Sys(errno, "stat", "/proc/thread-self/ns/net");
  return NsIdentity{st.st_dev, st.st_ino};
}

}  // namespace netns
