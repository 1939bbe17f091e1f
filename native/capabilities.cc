#include "capabilities.h"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace netns {

std::optional<Failure> DropEffectiveCapability(int cap) {
  if (cap < 0 || cap >= 64) return Failure::Sys(EINVAL, "capset");
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};  // pid 0: this thread
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (syscall(SYS_capget, &header, data) != 0) return Failure::Sys(errno, "capget");
  data[cap / 32].effective &= ~(1u << (cap % 32));
  if (syscall(SYS_capset, &header, data) != 0) return Failure::Sys(errno, "capset");
  return std::nullopt;
}

}  // namespace netns
