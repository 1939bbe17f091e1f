#include "js_error.h"

#include <string.h>

namespace netns {

Napi::Error ToJsError(Napi::Env env, const Failure& failure) {
  const bool own = !failure.code.empty();
  std::string code = own ? failure.code : strerrorname_np(failure.err);
  std::string message = own ? failure.message : strerrordesc_np(failure.err);
  Napi::Error error = Napi::Error::New(env, code + ": " + message);
  Napi::Object obj = error.Value();
  obj.Set("code", code);
  if (!own) obj.Set("errno", -failure.err);
  if (!failure.syscall.empty()) obj.Set("syscall", failure.syscall);
  if (!failure.path.empty()) obj.Set("path", failure.path);
  return error;
}

}  // namespace netns
