#include "file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "unique_fd.h"

namespace netns {

std::variant<int, Failure> TryLockFile(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd.valid()) return Failure::Sys(errno, "open", path);
  if (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) return -1;
    return Failure::Sys(errno, "flock", path);
  }
  // The previous holder unlinks the file before unlocking it: a lock on a
  // file no longer at `path` guards nothing.
  struct stat held, named;
  if (fstat(fd.get(), &held) != 0) return Failure::Sys(errno, "fstat", path);
  if (stat(path.c_str(), &named) != 0 || held.st_ino != named.st_ino || held.st_dev != named.st_dev) return -1;
  return fd.release();
}

}  // namespace netns
