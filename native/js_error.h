// Turns a Failure into a JavaScript Error carrying errno/code/syscall/path.
// The TypeScript layer rewrites the message in Node's wording.
#pragma once
#include <napi.h>
#include "failure.h"

namespace netns {

Napi::Error ToJsError(Napi::Env env, const Failure& failure);

}  // namespace netns
