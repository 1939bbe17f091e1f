// Whether the calling thread is in the process's own network namespace. A new
// thread inherits its creator's namespace, so no thread may be created from a
// switched one. Whether a thread is switched is a property of the OS thread,
// not of one copy of this addon: another copy loaded in the same process (or
// any other code) may have switched it, so the kernel is asked.
#pragma once
#include <optional>

#include "failure.h"

namespace netns {

// ERR_NETNS_SWITCHED_THREAD when the calling thread's network namespace is
// not the main thread's. Costs two stat calls: for threads other than the
// process's main thread, which never switches.
std::optional<Failure> CheckThreadAtHome();

}  // namespace netns
