#include "io_jobs.h"

#include <fcntl.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

namespace netns {

void SocketJob::Run(ThreadSwitch&) {
  fd_.reset(socket(domain_, type_ | SOCK_CLOEXEC, protocol_));
  if (!fd_.valid()) Fail(Failure::Sys(errno, "socket"));
}

Napi::Value SocketJob::Result(Napi::Env env) {
  Napi::Value fd = Napi::Number::New(env, fd_.get());
  fd_.release();  // handed to JavaScript, which now owns it
  return fd;
}

void BoundSocketJob::Run(ThreadSwitch&) {
  bool ok = spec_.unix_path ? BindUnix() : BindInet();
  if (ok && spec_.backlog >= 0 && listen(fd_.get(), spec_.backlog) != 0) {
    Fail(Failure::Sys(errno, "listen"));
    ok = false;
  }
  if (!ok) fd_.reset();
}

bool BoundSocketJob::BindInet() {
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
  hints.ai_socktype = type_;
  addrinfo* found = nullptr;
  std::string port = std::to_string(spec_.port);
  int rc = getaddrinfo(spec_.host.c_str(), port.c_str(), &hints, &found);
  if (rc != 0) {
    Fail(Failure::Own("ERR_NETNS_INVALID_ARG", "not a numeric address in this namespace: " + spec_.host));
    return false;
  }
  fd_.reset(socket(found->ai_family, type_ | SOCK_CLOEXEC, 0));
  if (!fd_.valid()) {
    Fail(Failure::Sys(errno, "socket"));
    freeaddrinfo(found);
    return false;
  }
  int one = 1;
  if (spec_.backlog >= 0) setsockopt(fd_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (found->ai_family == AF_INET6) {
    // Dual-stack, as libuv binds for Node: "::" accepts IPv4 too, and an
    // IPv4-mapped address (::ffff:a.b.c.d) can be bound at all.
    int v6only = 0;
    setsockopt(fd_.get(), IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only);
  }
  bool ok = bind(fd_.get(), found->ai_addr, found->ai_addrlen) == 0;
  if (!ok) Fail(Failure::Sys(errno, "bind"));
  freeaddrinfo(found);
  return ok;
}

bool BoundSocketJob::BindUnix() {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  // An abstract name (leading NUL) is its bytes exactly, as the caller padded
  // them (see sockets.ts); a path ends with a NUL that must fit too.
  const bool abstract = !spec_.host.empty() && spec_.host[0] == '\0';
  if (spec_.host.empty() || spec_.host.size() > sizeof addr.sun_path - (abstract ? 0 : 1)) {
    Fail(Failure::Own("ERR_NETNS_INVALID_ARG", "unix socket path must be 1 to 107 bytes"));
    return false;
  }
  memcpy(addr.sun_path, spec_.host.data(), spec_.host.size());
  auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + spec_.host.size() + (abstract ? 0 : 1));
  fd_.reset(socket(AF_UNIX, type_ | SOCK_CLOEXEC, 0));
  if (!fd_.valid()) {
    Fail(Failure::Sys(errno, "socket"));
    return false;
  }
  if (bind(fd_.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    Fail(Failure::Sys(errno, "bind"));
    return false;
  }
  return true;
}

void ReadFileJob::Run(ThreadSwitch&) {
  // O_NOFOLLOW: paths are checked on the JS side; never follow a planted link.
  UniqueFd fd(open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY));
  if (!fd.valid()) return Fail(Failure::Sys(errno, "open", path_));
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Fail(Failure::Sys(errno, "read", path_));
      break;
    }
    if (n == 0) break;
    data_.append(buf, static_cast<size_t>(n));
  }
}

Napi::Value ReadFileJob::Result(Napi::Env env) { return Napi::Buffer<char>::Copy(env, data_.data(), data_.size()); }

void WriteFileJob::Run(ThreadSwitch&) {
  UniqueFd fd(open(path_.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY));
  if (!fd.valid()) return Fail(Failure::Sys(errno, "open", path_));
  // A sysctl takes its value from a single write.
  ssize_t n;
  do {
    n = write(fd.get(), data_.data(), data_.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0) Fail(Failure::Sys(errno, "write", path_));
}

Napi::Value WriteFileJob::Result(Napi::Env env) { return env.Undefined(); }

}  // namespace netns
