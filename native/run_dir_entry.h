// What an entry under the run directory (/run/netns) is, before deleting it.
// Only two kinds are deleted, as `ip netns del` deletes them: a file with a
// network namespace bind-mounted on it, and the plain file such a mount
// leaves behind (a failed add or a lazy delete). Anything else - a symbolic
// link, which umount2 would follow to unmount whatever it points at, a
// directory, another kind of namespace, some other file mounted there - is
// refused and left alone.
#pragma once
#include <string>
#include <variant>

#include "failure.h"

namespace netns {

enum class RunDirEntry { kMountedNetns, kLeftoverFile };

// ENOENT is reported as unlink's, as deleting a missing name always was.
std::variant<RunDirEntry, Failure> InspectRunDirEntry(const std::string& path);

}  // namespace netns
