#include "run_dir_entry.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <cerrno>

#include "nsfd.h"
#include "unique_fd.h"

namespace netns {
namespace {

Failure Refused(const std::string& path, const std::string& what) {
  return Failure::Own("ERR_NETNS_NOT_NETNS",
                      "'" + path + "' is " + what + ", not a network namespace: refusing to delete it", path);
}

std::string Parent(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Whether the open file is on the same mount as the directory holding it:
// then nothing is mounted on it.
std::variant<bool, Failure> OnParentMount(int fd, const std::string& path) {
  struct statx file, dir;
  if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &file) != 0) return Failure::Sys(errno, "statx", path);
  std::string parent = Parent(path);
  if (statx(AT_FDCWD, parent.c_str(), 0, STATX_MNT_ID, &dir) != 0) return Failure::Sys(errno, "statx", parent);
  if ((file.stx_mask & dir.stx_mask & STATX_MNT_ID) == 0)  // kernels before 5.8: compare devices
    return file.stx_dev_major == dir.stx_dev_major && file.stx_dev_minor == dir.stx_dev_minor;
  return file.stx_mnt_id == dir.stx_mnt_id;
}

std::variant<RunDirEntry, Failure> InspectOpenEntry(int fd, const std::string& path) {
  struct statfs fs;
  if (fstatfs(fd, &fs) != 0) return Failure::Sys(errno, "fstatfs", path);
  if (fs.f_type == NSFS_MAGIC) {
    auto checked = CheckNetnsFd(fd, path);  // another kind of namespace is refused
    if (auto* failure = std::get_if<Failure>(&checked)) {
      if (failure->code.empty()) return *failure;
      return Failure::Own(failure->code, failure->message + ": refusing to delete it", path);
    }
    return RunDirEntry::kMountedNetns;
  }
  auto plain = OnParentMount(fd, path);
  if (auto* failure = std::get_if<Failure>(&plain)) return *failure;
  if (!std::get<bool>(plain)) return Refused(path, "a file with something other than a namespace mounted on it");
  // What `ip netns add` leaves when it fails is empty: a file holding data is someone's.
  struct stat st;
  if (fstat(fd, &st) != 0) return Failure::Sys(errno, "fstat", path);
  if (st.st_size != 0) return Refused(path, "a file holding data");
  return RunDirEntry::kLeftoverFile;
}

}  // namespace

std::variant<RunDirEntry, Failure> InspectRunDirEntry(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return Failure::Sys(errno, errno == ENOENT ? "unlink" : "lstat", path);
  if (S_ISLNK(st.st_mode)) return Refused(path, "a symbolic link");
  if (S_ISDIR(st.st_mode)) return Refused(path, "a directory");
  if (!S_ISREG(st.st_mode)) return Refused(path, "a special file");
  // O_NOFOLLOW: the entry may have become a link since lstat; O_NONBLOCK: or a FIFO.
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd.valid()) return Failure::Sys(errno, "open", path);
  return InspectOpenEntry(fd.get(), path);
}

}  // namespace netns
