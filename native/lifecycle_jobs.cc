#include "lifecycle_jobs.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

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

}  // namespace

void CreateNamespaceJob::Run(ThreadSwitch& thread) {
  if (!path_.empty() && !PrepareMountPoint()) return;
  if (auto failure = thread.Unshare()) {
    Fail(*failure);
  } else if (path_.empty() || BindThreadNamespace()) {
    OpenResult();
  }
  if (failure() && !path_.empty()) {
    umount2(path_.c_str(), MNT_DETACH);
    unlink(path_.c_str());
  }
}

// Under the directory lock: make the run directory a shared mount (bound onto
// itself first when it is not a mount point, exactly once however many
// creators race) and create the mount point exclusively.
bool CreateNamespaceJob::PrepareMountPoint() {
  if (mkdir(run_dir_.c_str(), 0755) != 0 && errno != EEXIST) {
    Fail(Failure::Sys(errno, "mkdir", run_dir_));
    return false;
  }
  DirLock lock(run_dir_);
  if (lock.error()) {
    Fail(Failure::Sys(lock.error(), "flock", run_dir_));
    return false;
  }
  if (mount("", run_dir_.c_str(), "none", MS_SHARED | MS_REC, nullptr) != 0) {
    if (errno != EINVAL) {
      Fail(Failure::Sys(errno, "mount", run_dir_));
      return false;
    }
    if (mount(run_dir_.c_str(), run_dir_.c_str(), "none", MS_BIND | MS_REC, nullptr) != 0 ||
        mount("", run_dir_.c_str(), "none", MS_SHARED | MS_REC, nullptr) != 0) {
      Fail(Failure::Sys(errno, "mount", run_dir_));
      return false;
    }
  }
  UniqueFd mount_point(open(path_.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0));
  if (!mount_point.valid()) {
    Fail(Failure::Sys(errno, "open", path_));
    return false;
  }
  return true;
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

Napi::Value CreateNamespaceJob::Result(Napi::Env env) {
  Napi::Object obj = Napi::Object::New(env);
  obj.Set("fd", created_.fd.get());
  obj.Set("dev", static_cast<double>(created_.id.dev));
  obj.Set("ino", static_cast<double>(created_.id.ino));
  created_.fd.release();  // JavaScript owns it now
  return obj;
}

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
