#include "js_error.h"

#include <string.h>

namespace netns {
namespace {

// glibc returns null for numbers it has no name for; the fallbacks match the
// TypeScript layer's.
std::string ErrnoCode(int err) {
  const char* name = strerrorname_np(err);
  return name ? name : "E" + std::to_string(err);
}

std::string ErrnoText(int err) {
  const char* text = strerrordesc_np(err);
  return text ? text : "unknown system error";
}

}  // namespace

// strerrordesc_np rather than strerror: no locale, and no shared buffer for
// an unknown number.
std::string StrError(int err) {
  const char* text = strerrordesc_np(err);
  return text ? text : "Unknown error " + std::to_string(err);
}

Napi::Error ToJsError(Napi::Env env, const Failure& failure) {
  const bool own = !failure.code.empty();
  Napi::Error error = Napi::Error::New(env, own ? failure.message : ErrnoText(failure.err));
  Napi::Object obj = error.Value();
  obj.Set("code", own ? failure.code : ErrnoCode(failure.err));
  if (!own) obj.Set("errno", -failure.err);
  if (!failure.syscall.empty()) obj.Set("syscall", failure.syscall);
  if (!failure.path.empty()) obj.Set("path", failure.path);
  return error;
}

}  // namespace netns
