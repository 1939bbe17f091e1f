// Namespace lifecycle, done the way `ip netns` does it so that both see each
// other's namespaces: persistent namespaces are bind mounts of a namespace
// file in a run directory (/run/netns), which is itself a shared mount.
#pragma once
#include <napi.h>

#include <string>

#include "io_job.h"
#include "nsfd.h"

namespace netns {

// Runs on an I/O thread that starts at home; the new namespace is made by
// unshare on that thread, which the pool then restores (or discards).
class CreateNamespaceJob : public IoJob {
 public:
  // An empty `path` makes an anonymous namespace that lives as long as the
  // returned descriptor (or anything inside it).
  CreateNamespaceJob(Napi::Env env, std::string run_dir, std::string path)
      : IoJob(env, UniqueFd()), run_dir_(std::move(run_dir)), path_(std::move(path)) {}
  void Run(ThreadSwitch& thread) override;
  Napi::Value Result(Napi::Env env) override;

 private:
  bool BindThreadNamespace();
  void OpenResult();

  std::string run_dir_;
  std::string path_;
  NsFd created_;
};

// Names an existing namespace, as `ip netns attach NAME PID`: `path` becomes
// a bind mount of `source` (/proc/PID/ns/net), made as CreateNamespaceJob
// makes one. Runs at home on an I/O thread: mounting is no namespace work,
// but it must not wait on libuv's shared threads either.
class AttachNamespaceJob : public IoJob {
 public:
  AttachNamespaceJob(Napi::Env env, std::string run_dir, std::string path, std::string source)
      : IoJob(env, UniqueFd()), run_dir_(std::move(run_dir)), path_(std::move(path)), source_(std::move(source)) {}
  void Run(ThreadSwitch& thread) override;
  Napi::Value Result(Napi::Env env) override;

 private:
  void BindSource();

  std::string run_dir_;
  std::string path_;
  std::string source_;
  NsFd attached_;
};

// Lazy unmount and unlink, as `ip netns del`, of a namespace or the file one
// left; anything else in the run directory is refused (see run_dir_entry.h).
class DeleteNamespaceJob : public IoJob {
 public:
  DeleteNamespaceJob(Napi::Env env, std::string path) : IoJob(env, UniqueFd()), path_(std::move(path)) {}
  void Run(ThreadSwitch& thread) override;
  Napi::Value Result(Napi::Env env) override;

 private:
  std::string path_;
};

}  // namespace netns
