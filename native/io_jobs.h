// The jobs the I/O threads run inside a namespace: create a socket, create and
// bind (and optionally listen on) one, read or write a file. Only creation and
// binding need the namespace; the descriptors are used from any thread after.
#pragma once
#include <napi.h>

#include <string>

#include "io_job.h"

namespace netns {

class SocketJob : public IoJob {
 public:
  SocketJob(Napi::Env env, UniqueFd ns_fd, int domain, int type, int protocol)
      : IoJob(env, std::move(ns_fd)), domain_(domain), type_(type), protocol_(protocol) {}
  void Run(ThreadSwitch& thread) override;
  Napi::Value Result(Napi::Env env) override;

 protected:
  int domain_;
  int type_;
  int protocol_;
  UniqueFd fd_;
};

// Binds to a numeric IPv4/IPv6 host (scope ids like fe80::1%eth0 are looked up
// inside the namespace) or to a unix path; a leading NUL means abstract.
struct BindSpec {
  std::string host;  // numeric address, or the path when `unix_path` is set
  int port = 0;
  bool unix_path = false;
  int backlog = -1;  // >= 0: listen after binding
};

class BoundSocketJob : public SocketJob {
 public:
  BoundSocketJob(Napi::Env env, UniqueFd ns_fd, int type, BindSpec spec)
      : SocketJob(env, std::move(ns_fd), 0, type, 0), spec_(std::move(spec)) {}
  void Run(ThreadSwitch& thread) override;

 private:
  bool BindInet();
  bool BindUnix();
  BindSpec spec_;
};

class ReadFileJob : public IoJob {
 public:
  ReadFileJob(Napi::Env env, UniqueFd ns_fd, std::string path)
      : IoJob(env, std::move(ns_fd)), path_(std::move(path)) {}
  void Run(ThreadSwitch& thread) override;
  Napi::Value Result(Napi::Env env) override;

 private:
  std::string path_;
  std::string data_;
};

class WriteFileJob : public IoJob {
 public:
  WriteFileJob(Napi::Env env, UniqueFd ns_fd, std::string path, std::string data)
      : IoJob(env, std::move(ns_fd)), path_(std::move(path)), data_(std::move(data)) {}
  void Run(ThreadSwitch& thread) override;
  Napi::Value Result(Napi::Env env) override;

 private:
  std::string path_;
  std::string data_;
};

}  // namespace netns
