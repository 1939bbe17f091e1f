#include "run_program.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <unordered_set>
#include <vector>

#include "failure.h"
#include "js_error.h"
#include "spawn_child.h"
#include "unique_fd.h"

namespace netns {
namespace {

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

// The programs started here and not yet reaped. KillProgram signals only a
// pid in this set, under its lock, and a program leaves it (under the same
// lock) just before it is reaped: until then its pid, at worst a zombie's,
// cannot have been given to another process, so a kill never reaches a
// stranger. Process-wide (pids are) and never destroyed: a libuv thread may
// still reap during teardown.
struct Unreaped {
  std::mutex lock;
  std::unordered_set<pid_t> pids;
};

Unreaped& Running() {
  static auto* running = new Unreaped();
  return *running;
}

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

// One started program until it is reaped: its pipes served and its exit
// read on a thread of its own. Not on libuv's shared pool (an AsyncWorker):
// a delegate held one of its threads (4 by default) for its whole run, so a
// resident daemon's fifth IPAM at once waited, and Node's async fs with it.
class ProgramRun {
 public:
  ProgramRun(Napi::Env env, pid_t pid, UniqueFd in, UniqueFd out, UniqueFd err, std::string input)
      : deferred_(Napi::Promise::Deferred::New(env)),
        pid_(pid),
        in_(std::move(in)),
        out_(std::move(out)),
        err_(std::move(err)),
        input_(std::move(input)) {}

  Napi::Promise Promise() const { return deferred_.Promise(); }

  // Pipes and waitpid only: nothing here depends on this thread's namespace.
  // The program is waited for without reaping it (WNOWAIT), then leaves the
  // running set and is reaped under its lock (see Unreaped).
  void Wait() {
    Serve();
    siginfo_t exited;
    while (waitid(P_PID, static_cast<id_t>(pid_), &exited, WEXITED | WNOWAIT) < 0) {
      if (errno != EINTR) break;  // cannot happen for our own child; waitpid below says what went wrong
    }
    std::lock_guard<std::mutex> hold(Running().lock);
    Running().pids.erase(pid_);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0) {
      if (errno != EINTR) {
        wait_errno_ = errno;
        return;
      }
    }
    status_ = status;
  }

  // On the JavaScript thread, once the program is reaped; env is null when
  // the environment is being torn down (nothing is settled then).
  static void Settle(Napi::Env env, Napi::Function, std::nullptr_t*, ProgramRun* run) {
    std::unique_ptr<ProgramRun> owned(run);
    if (env == nullptr) return;
    if (run->wait_errno_ != 0) return run->deferred_.Reject(ToJsError(env, Failure::Sys(run->wait_errno_, "waitpid")).Value());
    Napi::Object exit = Napi::Object::New(env);
    int status = run->status_;
    exit.Set("status", WIFEXITED(status) ? Napi::Value(Napi::Number::New(env, WEXITSTATUS(status))) : env.Null());
    exit.Set("signal", WIFSIGNALED(status) ? Napi::Value(Napi::Number::New(env, WTERMSIG(status))) : env.Null());
    exit.Set("stdout", Napi::Buffer<char>::Copy(env, run->stdout_.data(), run->stdout_.size()));
    exit.Set("stderr", Napi::Buffer<char>::Copy(env, run->stderr_.data(), run->stderr_.size()));
    run->deferred_.Resolve(exit);
  }

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

using ProgramTsfn = Napi::TypedThreadSafeFunction<std::nullptr_t, ProgramRun, &ProgramRun::Settle>;

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
  std::vector<char*> argv = {path.data(), nullptr};
  std::vector<char*> envp;
  for (std::string& entry : env_strings) envp.push_back(entry.data());
  envp.push_back(nullptr);
  ChildProgram program{path.c_str(), argv.data(), envp.data(), {in.read.get(), out.write.get(), err.write.get()}};
  pid_t pid;
  {
    // Under the lock: the program is in the set before any thread can reap it.
    std::lock_guard<std::mutex> hold(Running().lock);
    pid = SpawnDyingWithParent(program);
    if (pid > 0) Running().pids.insert(pid);
  }
  if (pid < 0) throw ToJsError(env, Failure::Sys(-pid, "spawn", path));
  in.read.reset();
  out.write.reset();
  err.write.reset();
  // Its thread must not block on a write the program does not read.
  fcntl(in.write.get(), F_SETFL, O_NONBLOCK);
  auto* run = new ProgramRun(env, pid, std::move(in.write), std::move(out.read), std::move(err.read),
                             std::string(input.Data(), input.Length()));
  Napi::Object started = Napi::Object::New(env);
  started.Set("pid", Napi::Number::New(env, pid));
  started.Set("exit", run->Promise());
  // The function keeps the event loop alive while the program runs, as the work of an AsyncWorker did.
  auto settle = ProgramTsfn::New(env, "netns:runProgram", 0, 1);
  try {
    std::thread([settle, run]() mutable {
      run->Wait();
      if (settle.BlockingCall(run) != napi_ok) delete run;  // the environment is closing: nobody to tell
      settle.Release();
    }).detach();
  } catch (const std::system_error& error) {
    // No thread to wait on it (EAGAIN: the thread limit): the program must not run unwatched.
    kill(pid, SIGKILL);
    run->Wait();
    delete run;
    settle.Release();
    throw ToJsError(env, Failure::Sys(error.code().value(), "pthread_create", path));
  }
  return started;
}

Napi::Value KillProgram(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsNumber()) throw Napi::TypeError::New(env, "pid must be a number");
  pid_t pid = info[0].As<Napi::Number>().Int32Value();
  std::lock_guard<std::mutex> hold(Running().lock);
  bool running = Running().pids.count(pid) != 0;
  if (running) kill(pid, SIGKILL);
  return Napi::Boolean::New(env, running);
}

}  // namespace netns
