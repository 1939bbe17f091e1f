#include "run_dir_watch.h"

#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

namespace netns {
namespace {

// Room for many events per read; the kernel never splits one, and refuses
// (EINVAL) a buffer too small for the next, which this always fits.
constexpr size_t kEvents = 64 * 1024;
static_assert(kEvents >= sizeof(inotify_event) + NAME_MAX + 1, "one event must fit");

ssize_t ReadEvents(int fd, uint8_t* buffer, size_t size) {
  for (;;) {
    ssize_t got = read(fd, buffer, size);
    if (got < 0 && errno == EINTR) continue;
    return got;
  }
}

}  // namespace

const FdReader kInotifyReader{"read", kEvents, &ReadEvents};

std::variant<UniqueFd, Failure> OpenRunDirInotify(const std::string& run_dir) {
  if (mkdir(run_dir.c_str(), 0755) != 0 && errno != EEXIST) return Failure::Sys(errno, "mkdir", run_dir);
  UniqueFd fd(inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!fd.valid()) return Failure::Sys(errno, "inotify_init1");
  if (inotify_add_watch(fd.get(), run_dir.c_str(), IN_CREATE | IN_DELETE | IN_ONLYDIR) < 0)
    return Failure::Sys(errno, "inotify_add_watch", run_dir);
  return fd;
}

}  // namespace netns
