// A failed system call or validation, described without touching JavaScript so
// that it can be produced on any thread and turned into an Error on the JS thread.
#pragma once
#include <string>

namespace netns {

struct Failure {
  int err = 0;          // positive errno, 0 when `code` names our own error
  std::string syscall;  // e.g. "open", "setns"
  std::string path;     // empty when no path is involved
  std::string code;     // ERR_NETNS_* for our own errors, empty for errno
  std::string message;  // detail for our own errors

  static Failure Sys(int err, std::string syscall, std::string path = {}) {
    Failure f;
    f.err = err;
    f.syscall = std::move(syscall);
    f.path = std::move(path);
    return f;
  }
  static Failure Own(std::string code, std::string message, std::string path = {}) {
    Failure f;
    f.code = std::move(code);
    f.message = std::move(message);
    f.path = std::move(path);
    return f;
  }
};

}  // namespace netns
