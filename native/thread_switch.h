// The per-thread namespace switch. One instance belongs to one OS thread: it
// remembers that thread's own namespace (its home), enters a target and comes
// back. A thread whose return fails is poisoned: it must run nothing more and
// exit, because it can no longer know which namespace its work would land in.
#pragma once
#include <optional>

#include "failure.h"
#include "unique_fd.h"

namespace netns {

class ThreadSwitch {
 public:
  ThreadSwitch() = default;
  ThreadSwitch(const ThreadSwitch&) = delete;
  ThreadSwitch& operator=(const ThreadSwitch&) = delete;

  // Opens /proc/self/task/<tid>/ns/net for the calling thread. Must be called
  // on the owning thread before it has ever switched.
  std::optional<Failure> Init();
  std::optional<Failure> Enter(int target_fd);
  // Moves the thread into a brand-new network namespace.
  std::optional<Failure> Unshare();
  // On failure the switch is poisoned for good.
  std::optional<Failure> Restore();

 private:
  UniqueFd home_fd_;
  bool switched_ = false;
  bool poisoned_ = false;
};

}  // namespace netns
