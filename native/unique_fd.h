// Owns one file descriptor and closes it when it goes out of scope, so an
// early return or an exception cannot leak it. Every descriptor the addon
// holds lives in one of these until release() hands it to JavaScript.
#pragma once
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace netns {

class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }

  bool valid() const { return fd_ >= 0; }
  int get() const { return fd_; }
  // Hands the descriptor to the caller, who now closes it.
  int release() { return std::exchange(fd_, -1); }
  // Closes the held descriptor (if any) and takes `fd`. Keeps errno, so a
  // failure can still be reported after the reset.
  void reset(int fd = -1) {
    if (fd_ >= 0) {
      int saved = errno;
      close(fd_);
      errno = saved;
    }
    fd_ = fd;
  }

 private:
  int fd_;
};

}  // namespace netns
