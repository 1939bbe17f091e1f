// Turns a Failure into a JavaScript Error of one shape: `code` plus a plain
// message (never prefixed by the code). Our own errors carry their message;
// errno errors carry errno (negative, as Node's), syscall and path, from which
// the TypeScript layer builds Node's wording, and strerror's text meanwhile.
#pragma once
#include <napi.h>
#include "failure.h"

namespace netns {

Napi::Error ToJsError(Napi::Env env, const Failure& failure);

// What glibc's strerror says for a positive errno, untranslated (as iproute2
// prints it under the C locale): "File exists", "Unknown error 999".
std::string StrError(int err);

}  // namespace netns
