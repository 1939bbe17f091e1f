// Opening and validating namespace files: a path is accepted only when it is an
// nsfs file of a network namespace, so a tmpfs leftover or a mount namespace
// file is reported before anything tries to switch into it.
#pragma once
#include <sys/types.h>

#include <string>
#include <variant>

#include "failure.h"
#include "unique_fd.h"

namespace netns {

struct NsIdentity {
  dev_t dev = 0;
  ino_t ino = 0;
};

struct NsFd {
  UniqueFd fd;
  NsIdentity id;
};

// Opens `path` O_CLOEXEC and checks it.
std::variant<NsFd, Failure> OpenNetns(const std::string& path);

// Checks an already open fd; `path` only names it in the failure.
std::variant<NsIdentity, Failure> CheckNetnsFd(int fd, const std::string& path);

// Identity of the namespace the calling thread is in.
std::variant<NsIdentity, Failure> ThreadNetns();

}  // namespace netns
