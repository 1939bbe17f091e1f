#include "thread_switch.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace netns {

std::optional<Failure> ThreadSwitch::Init() {
  if (home_fd_.valid()) return std::nullopt;
  // /proc/self/ns/net would name the main thread's namespace, not ours.
  std::string path = "/proc/self/task/" + std::to_string(gettid()) + "/ns/net";
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Failure::Sys(errno, "open", path);
  home_fd_ = std::move(fd);
  return std::nullopt;
}

std::optional<Failure> ThreadSwitch::Enter(int target_fd) {
  if (poisoned_)
    return Failure::Own("ERR_NETNS_POISONED", "this thread failed to restore its namespace");
  if (switched_)
    return Failure::Own("ERR_NETNS_SWITCHED", "this thread is already inside a namespace");
  if (auto failure = Init()) return failure;
  if (setns(target_fd, CLONE_NEWNET) != 0) return Failure::Sys(errno, "setns");
  switched_ = true;
  return std::nullopt;
}

std::optional<Failure> ThreadSwitch::Unshare() {
  if (poisoned_)
    return Failure::Own("ERR_NETNS_POISONED", "this thread failed to restore its namespace");
  if (switched_)
    return Failure::Own("ERR_NETNS_SWITCHED", "this thread is already inside a namespace");
  if (auto failure = Init()) return failure;
  if (unshare(CLONE_NEWNET) != 0) return Failure::Sys(errno, "unshare");
  switched_ = true;
  return std::nullopt;
}

std::optional<Failure> ThreadSwitch::Restore() {
  if (!switched_) return std::nullopt;
  if (setns(home_fd_.get(), CLONE_NEWNET) != 0) {
    poisoned_ = true;
    return Failure::Sys(errno, "setns");
  }
  switched_ = false;
  return std::nullopt;
}

}  // namespace netns
