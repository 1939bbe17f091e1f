#include "thread_home.h"

#include <sys/stat.h>

#include <cerrno>
#include <variant>

#include "nsfd.h"

namespace netns {

std::optional<Failure> CheckThreadAtHome() {
  auto current = ThreadNetns();
  if (auto* failure = std::get_if<Failure>(&current)) return *failure;
  const NsIdentity& mine = std::get<NsIdentity>(current);
  // /proc/self names the thread group leader: the main thread's namespace.
  struct stat main_thread;
  if (stat("/proc/self/ns/net", &main_thread) != 0) return Failure::Sys(errno, "stat", "/proc/self/ns/net");
  if (mine.dev == main_thread.st_dev && mine.ino == main_thread.st_ino) return std::nullopt;
  return Failure::Own("ERR_NETNS_SWITCHED_THREAD",
                      "this thread is inside another network namespace than the process's main thread (as in "
                      "withNetNS's fn), so it cannot start NetNS I/O threads: create sockets and processes "
                      "directly");
}

}  // namespace netns
