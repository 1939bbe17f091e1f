// An exclusive advisory lock on a lock file (flock), for one writer per
// resource across processes. The lock belongs to the open file description:
// a child that inherits the descriptor keeps the lock held after its parent
// died, until the child exits too.
#pragma once
#include <string>
#include <variant>

#include "failure.h"

namespace netns {

// Opens (creating) `path` close-on-exec and takes its lock without waiting.
// Returns the descriptor, -1 if another description holds the lock, or the
// failure. A lock file unlinked by its last holder while we waited is not
// taken: the caller simply tries again and meets the new file.
std::variant<int, Failure> TryLockFile(const std::string& path);

}  // namespace netns
