// Testing aid: capabilities are per thread, so a thread can drop one from its
// own effective set to provoke a real restore failure (setns -> EPERM).
#pragma once
#include <optional>

#include "failure.h"

namespace netns {

std::optional<Failure> DropEffectiveCapability(int cap);

}  // namespace netns
