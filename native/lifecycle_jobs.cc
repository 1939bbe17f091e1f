#include "lifecycle_jobs.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

#include "run_dir_entry.h"
#include "unique_fd.h"

namespace netns {
namespace {

// Holds an exclusive flock on the run directory for its lifetime.
// Closing the descriptor releases the lock.
class DirLock {
 public:
  explicit DirLock(const std::string& dir) : fd_(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (!fd_.valid() || flock(fd_.get(), LOCK_EX) != 0) error_ = errno;
  }
  int error() const { return error_; }

 private:
  UniqueFd fd_;
  int error_ = 0;
};

std::string ThreadNamespacePath() { return "/proc/self/task/" + std::to_string(gettid()) + "/ns/net"; }

// Under the directory lock: make the run directory a shared mount (bound onto
// itself first when it is not a mount point, exactly once however many
// creators race) and create the mount point exclusively.
std::optional<Failure> PrepareMountPoint(const std::string& run_dir, const std::string& path) {
  if (mkdir(run_dir.c_str(), 0755) != 0 && errno != EEXIST) return Failure::Sys(errno, "mkdir", run_dir);
  DirLock lock(run_dir);
  if (lock.error()) return Failure::Sys(lock.error(), "flock", run_dir);
  if (mount("", run_dir.c_str(), "none", MS_SHARED | MS_REC, nullptr) != 0) {
    if (errno != EINVAL) return Failure::Sys(errno, "mount", run_dir);
    if (mount(run_dir.c_str(), run_dir.c_str(), "none", MS_BIND | MS_REC, nullptr) != 0 ||
        mount("", run_dir.c_str(), "none", MS_SHARED | MS_REC, nullptr) != 0) {
      return Failure::Sys(errno, "mount", run_dir);
    }
  }
  UniqueFd mount_point(open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0));
  if (!mount_point.valid()) return Failure::Sys(errno, "open", path);
  return std::nullopt;
}

// Undoes a failed add once its mount point exists: nothing may be left.
void RemoveMountPoint(const std::string& path) {
  umount2(path.c_str(), MNT_DETACH);
  unlink(path.c_str());
}

// JavaScript owns the descriptor once this returns.
Napi::Value OpenedNamespace(Napi::Env env, NsFd& ns) {
  Napi::Object obj = Napi::Object::New(env);
  obj.Set("fd", ns.fd.get());
  obj.Set("dev", static_cast<double>(ns.id.dev));
  obj.Set("ino", static_cast<double>(ns.id.ino));
  ns.fd.release();
  return obj;
}

}  // namespace

void CreateNamespaceJob::Run(ThreadSwitch& thread) {
  if (!path_.empty()) {
    if (auto failure = PrepareMountPoint(run_dir_, path_)) return Fail(*failure);
  }
  if (auto failure = thread.Unshare()) {
    Fail(*failure);
  } else if (path_.empty() || BindThreadNamespace()) {
    OpenResult();
  }
  if (failure() && !path_.empty()) RemoveMountPoint(path_);
}

bool CreateNamespaceJob::BindThreadNamespace() {
  std::string source = ThreadNamespacePath();
  if (mount(source.c_str(), path_.c_str(), "none", MS_BIND, nullptr) != 0) {
    Fail(Failure::Sys(errno, "mount", path_));
    return false;
  }
  return true;
}

void CreateNamespaceJob::OpenResult() {
  auto opened = OpenNetns(path_.empty() ? ThreadNamespacePath() : path_);
  if (auto* failure = std::get_if<Failure>(&opened)) return Fail(*failure);
  created_ = std::get<NsFd>(std::move(opened));
}

Napi::Value CreateNamespaceJob::Result(Napi::Env env) { return OpenedNamespace(env, created_); }

void AttachNamespaceJob::Run(ThreadSwitch&) {
  if (auto failure = PrepareMountPoint(run_dir_, path_)) return Fail(*failure);
  auto opened = OpenNetns(source_);  // a missing process: ENOENT naming the source, as ip's message does
  if (auto* failure = std::get_if<Failure>(&opened)) {
    Fail(*failure);
  } else {
    attached_ = std::get<NsFd>(std::move(opened));
    BindSource();
  }
  if (failure()) RemoveMountPoint(path_);
}

// Binds the namespace opened, through its descriptor, not the /proc path
// again: a process that exited meanwhile, its pid taken by another, would
// name another namespace.
void AttachNamespaceJob::BindSource() {
  std::string held = "/proc/thread-self/fd/" + std::to_string(attached_.fd.get());
  if (mount(held.c_str(), path_.c_str(), "none", MS_BIND, nullptr) != 0) Fail(Failure::Sys(errno, "mount", path_));
}

Napi::Value AttachNamespaceJob::Result(Napi::Env env) { return OpenedNamespace(env, attached_); }

void DeleteNamespaceJob::Run(ThreadSwitch&) {
  auto entry = InspectRunDirEntry(path_);
  if (auto* failure = std::get_if<Failure>(&entry)) return Fail(*failure);
  // As ip netns del: the unmount may fail (already unmounted); the unlink
  // decides. UMOUNT_NOFOLLOW: a link planted since the check is not followed.
  if (std::get<RunDirEntry>(entry) == RunDirEntry::kMountedNetns) umount2(path_.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW);
  if (unlink(path_.c_str()) != 0) Fail(Failure::Sys(errno, "unlink", path_));
}

Napi::Value DeleteNamespaceJob::Result(Napi::Env env) { return env.Undefined(); }

}  // namespace netns
