#include "run_program.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <string>
#include <vector>

#include "failure.h"
#include "js_error.h"
#include "unique_fd.h"

namespace netns {
namespace {

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

// Close-on-exec ends, neither of them 0, 1 or 2: the child's dup2 onto its
// stdio must make a new descriptor (dup2 of a descriptor onto itself would
// keep close-on-exec), and ours close at its exec.
std::optional<Failure> MakePipe(Pipe& pipe) {
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0) return Failure::Sys(errno, "pipe2");
  UniqueFd raw[2] = {UniqueFd(ends[0]), UniqueFd(ends[1])};
  UniqueFd* out[2] = {&pipe.read, &pipe.write};
  for (int i = 0; i < 2; i++) {
    if (raw[i].get() > 2) {
      *out[i] = std::move(raw[i]);
      continue;
    }
    int moved = fcntl(raw[i].get(), F_DUPFD_CLOEXEC, 3);
    if (moved < 0) return Failure::Sys(errno, "fcntl");
    out[i]->reset(moved);
  }
  return std::nullopt;
}

// Frees the spawn attributes and file actions however the start goes.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

// Node ignores SIGPIPE and a thread may block signals; the program gets what
// a program started from a shell gets (libuv's spawn does the same).
void DefaultSignals(posix_spawnattr_t& attr) {
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
}

class RunWorker : public Napi::AsyncWorker {
 public:
  RunWorker(Napi::Env env, pid_t pid, UniqueFd in, UniqueFd out, UniqueFd err, std::string input)
      : Napi::AsyncWorker(env, "netns:runProgram"),
        deferred_(Napi::Promise::Deferred::New(env)),
        pid_(pid),
        in_(std::move(in)),
        out_(std::move(out)),
        err_(std::move(err)),
        input_(std::move(input)) {}

  Napi::Promise Promise() const { return deferred_.Promise(); }

 protected:
  // Pipes and waitpid only: nothing here depends on this thread's namespace.
  void Execute() override {
    Serve();
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0) {
      if (errno != EINTR) {
        wait_errno_ = errno;
        return;
      }
    }
    status_ = status;
  }

  void OnOK() override {
    Napi::Env env = Env();
    if (wait_errno_ != 0) return deferred_.Reject(ToJsError(env, Failure::Sys(wait_errno_, "waitpid")).Value());
    Napi::Object exit = Napi::Object::New(env);
    exit.Set("status", WIFEXITED(status_) ? Napi::Value(Napi::Number::New(env, WEXITSTATUS(status_))) : env.Null());
    exit.Set("signal", WIFSIGNALED(status_) ? Napi::Value(Napi::Number::New(env, WTERMSIG(status_))) : env.Null());
    exit.Set("stdout", Napi::Buffer<char>::Copy(env, stdout_.data(), stdout_.size()));
    exit.Set("stderr", Napi::Buffer<char>::Copy(env, stderr_.data(), stderr_.size()));
    deferred_.Resolve(exit);
  }

  void OnError(const Napi::Error& error) override { deferred_.Reject(error.Value()); }

 private:
  // Writes stdin and reads both outputs at once, so that a program filling
  // one pipe while we wait on another cannot stall. A program that stops
  // reading its stdin (EPIPE) just gets no more; its exit says the rest.
  void Serve() {
    size_t written = 0;
    if (input_.empty()) in_.reset();
    while (out_.valid() || err_.valid() || in_.valid()) {
      pollfd fds[3] = {{in_.get(), POLLOUT, 0}, {out_.get(), POLLIN, 0}, {err_.get(), POLLIN, 0}};
      if (poll(fds, 3, -1) < 0) {
        if (errno == EINTR) continue;
        break;  // cannot happen with valid arguments; the pipes close and the program is still reaped
      }
      if (fds[0].revents != 0) {
        ssize_t n = write(in_.get(), input_.data() + written, input_.size() - written);
        if (n > 0) written += static_cast<size_t>(n);
        if ((n < 0 && errno != EINTR && errno != EAGAIN) || written == input_.size()) in_.reset();
      }
      Drain(fds[1], out_, stdout_);
      Drain(fds[2], err_, stderr_);
    }
    in_.reset();
    out_.reset();
    err_.reset();
  }

  static void Drain(const pollfd& fd, UniqueFd& pipe, std::string& into) {
    if (fd.revents == 0) return;
    char buf[65536];
    ssize_t n = read(pipe.get(), buf, sizeof buf);
    if (n > 0) return (void)into.append(buf, static_cast<size_t>(n));
    if (n == 0 || (errno != EINTR && errno != EAGAIN)) pipe.reset();
  }

  Napi::Promise::Deferred deferred_;
  pid_t pid_;
  UniqueFd in_, out_, err_;
  std::string input_;
  std::string stdout_, stderr_;
  int status_ = 0;
  int wait_errno_ = 0;
};

std::vector<std::string> StringList(Napi::Env env, Napi::Value value, const char* what) {
  if (!value.IsArray()) throw Napi::TypeError::New(env, std::string(what) + " must be an array of strings");
  Napi::Array list = value.As<Napi::Array>();
  std::vector<std::string> strings;
  for (uint32_t i = 0; i < list.Length(); i++) {
    Napi::Value item = list.Get(i);
    if (!item.IsString()) throw Napi::TypeError::New(env, std::string(what) + " must be an array of strings");
    strings.push_back(item.As<Napi::String>().Utf8Value());
  }
  return strings;
}

}  // namespace

Napi::Value RunProgram(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) throw Napi::TypeError::New(env, "path must be a string");
  std::string path = info[0].As<Napi::String>().Utf8Value();
  std::vector<std::string> env_strings = StringList(env, info[1], "env");
  if (!info[2].IsBuffer()) throw Napi::TypeError::New(env, "stdin must be a Buffer");
  Napi::Buffer<char> input = info[2].As<Napi::Buffer<char>>();

  Pipe in, out, err;
  for (Pipe* pipe : {&in, &out, &err}) {
    if (auto failure = MakePipe(*pipe)) throw ToJsError(env, *failure);
  }
  SpawnSetup setup;
  posix_spawn_file_actions_adddup2(&setup.actions, in.read.get(), 0);
  posix_spawn_file_actions_adddup2(&setup.actions, out.write.get(), 1);
  posix_spawn_file_actions_adddup2(&setup.actions, err.write.get(), 2);
  DefaultSignals(setup.attr);
  std::vector<char*> argv = {path.data(), nullptr};
  std::vector<char*> envp;
  for (std::string& entry : env_strings) envp.push_back(entry.data());
  envp.push_back(nullptr);
  pid_t pid;
  // glibc starts the child with CLONE_VFORK and reports a failed exec here.
  int rc = posix_spawn(&pid, path.c_str(), &setup.actions, &setup.attr, argv.data(), envp.data());
  if (rc != 0) throw ToJsError(env, Failure::Sys(rc, "spawn", path));
  in.read.reset();
  out.write.reset();
  err.write.reset();
  // The worker must not block on a write the program does not read.
  fcntl(in.write.get(), F_SETFL, O_NONBLOCK);
  auto* worker = new RunWorker(env, pid, std::move(in.write), std::move(out.read), std::move(err.read),
                               std::string(input.Data(), input.Length()));
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

}  // namespace netns
