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
#include <unordered_map>
#include <vector>

#include "failure.h"
#include "js_error.h"
#include "own_thread.h"
#include "spawn_child.h"
#include "unique_fd.h"

namespace netns {
namespace {

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

// The programs asked for and not yet reaped, by id: pid 0 until started,
// kCancelled when killed before it could start. KillProgram signals only a
// pid in this map, under its lock, and a program leaves it (under the same
// lock) just before it is reaped: until then its pid, at worst a zombie's,
// cannot have been given to another process, so a kill never reaches a
// stranger. Process-wide (pids are) and never destroyed: a program's thread
// may still reap during teardown.
constexpr pid_t kCancelled = -1;

struct Unreaped {
  std::mutex lock;
  std::unordered_map<uint64_t, pid_t> programs;
  uint64_t next_id = 1;
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

// One program from its start to its reaping, on a thread of its own: started
// there (spawning blocks its thread until the exec: ~1 ms, more under load,
// which on the JS thread stalled every other call of a resident daemon),
// its pipes served and its exit read. Not on libuv's shared pool (an
// AsyncWorker): a delegate held one of its threads (4 by default) for its
// whole run, so a resident daemon's fifth IPAM at once waited, and Node's
// async fs with it. The thread lives until the program is reaped, so the
// program's PR_SET_PDEATHSIG (spawn_child.h) fires only when the process dies.
class ProgramRun {
 public:
  ProgramRun(Napi::Env env, uint64_t id, std::string path, std::vector<std::string> environment, Pipe in, Pipe out, Pipe err, std::string input)
      : deferred_(Napi::Promise::Deferred::New(env)),
        id_(id),
        path_(std::move(path)),
        environment_(std::move(environment)),
        in_(std::move(in)),
        out_(std::move(out)),
        err_(std::move(err)),
        input_(std::move(input)) {}

  Napi::Promise Promise() const { return deferred_.Promise(); }

  // Pipes, spawn and waitpid only: nothing here depends on this thread's namespace.
  void Run() {
    if (Start()) Wait();
  }

  // On the JavaScript thread, once the program is reaped (or could not
  // start); env is null when the environment is being torn down (nothing is
  // settled then). A program killed before it started reads as killed.
  static void Settle(Napi::Env env, Napi::Function, std::nullptr_t*, ProgramRun* run) {
    std::unique_ptr<ProgramRun> owned(run);
    if (env == nullptr) return;
    if (run->spawn_errno_ != 0) return run->deferred_.Reject(ToJsError(env, Failure::Sys(run->spawn_errno_, "spawn", run->path_)).Value());
    if (run->wait_errno_ != 0) return run->deferred_.Reject(ToJsError(env, Failure::Sys(run->wait_errno_, "waitpid")).Value());
    Napi::Object exit = Napi::Object::New(env);
    int status = run->status_;
    bool exited = !run->cancelled_ && WIFEXITED(status);
    int signal = run->cancelled_ ? SIGKILL : (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    exit.Set("status", exited ? Napi::Value(Napi::Number::New(env, WEXITSTATUS(status))) : env.Null());
    exit.Set("signal", signal != 0 ? Napi::Value(Napi::Number::New(env, signal)) : env.Null());
    exit.Set("stdout", Napi::Buffer<char>::Copy(env, run->stdout_.data(), run->stdout_.size()));
    exit.Set("stderr", Napi::Buffer<char>::Copy(env, run->stderr_.data(), run->stderr_.size()));
    run->deferred_.Resolve(exit);
  }

 private:
  // Starts the program unless it was killed first; under the lock, so that
  // the map has its pid before KillProgram can look. Our ends of its pipes
  // are what is left open here.
  bool Start() {
    std::vector<char*> argv = {path_.data(), nullptr};
    std::vector<char*> envp;
    for (std::string& entry : environment_) envp.push_back(entry.data());
    envp.push_back(nullptr);
    ChildProgram program{path_.c_str(), argv.data(), envp.data(), {in_.read.get(), out_.write.get(), err_.write.get()}};
    {
      std::lock_guard<std::mutex> hold(Running().lock);
      pid_t& slot = Running().programs[id_];
      cancelled_ = slot == kCancelled;
      pid_ = cancelled_ ? -1 : SpawnDyingWithParent(program);
      if (pid_ > 0) slot = pid_;
      else Running().programs.erase(id_);
    }
    if (pid_ < 0 && !cancelled_) spawn_errno_ = -pid_;
    in_.read.reset();
    out_.write.reset();
    err_.write.reset();
    // This thread must not block on a write the program does not read.
    fcntl(in_.write.get(), F_SETFL, O_NONBLOCK);
    return pid_ > 0;
  }

  // The program is waited for without reaping it (WNOWAIT), then leaves the
  // map and is reaped under its lock (see Unreaped).
  void Wait() {
    Serve();
    siginfo_t exited;
    while (waitid(P_PID, static_cast<id_t>(pid_), &exited, WEXITED | WNOWAIT) < 0) {
      if (errno != EINTR) break;  // cannot happen for our own child; waitpid below says what went wrong
    }
    std::lock_guard<std::mutex> hold(Running().lock);
    Running().programs.erase(id_);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0) {
      if (errno != EINTR) {
        wait_errno_ = errno;
        return;
      }
    }
    status_ = status;
  }

  // Writes stdin and reads both outputs at once, so that a program filling
  // one pipe while we wait on another cannot stall. A program that stops
  // reading its stdin (EPIPE) just gets no more; its exit says the rest.
  void Serve() {
    size_t written = 0;
    UniqueFd& in = in_.write;
    UniqueFd& out = out_.read;
    UniqueFd& err = err_.read;
    if (input_.empty()) in.reset();
    while (out.valid() || err.valid() || in.valid()) {
      pollfd fds[3] = {{in.get(), POLLOUT, 0}, {out.get(), POLLIN, 0}, {err.get(), POLLIN, 0}};
      if (poll(fds, 3, -1) < 0) {
        if (errno == EINTR) continue;
        break;  // cannot happen with valid arguments; the pipes close and the program is still reaped
      }
      if (fds[0].revents != 0) {
        ssize_t n = write(in.get(), input_.data() + written, input_.size() - written);
        if (n > 0) written += static_cast<size_t>(n);
        if ((n < 0 && errno != EINTR && errno != EAGAIN) || written == input_.size()) in.reset();
      }
      Drain(fds[1], out, stdout_);
      Drain(fds[2], err, stderr_);
    }
    in.reset();
    out.reset();
    err.reset();
  }

  static void Drain(const pollfd& fd, UniqueFd& pipe, std::string& into) {
    if (fd.revents == 0) return;
    char buf[65536];
    ssize_t n = read(pipe.get(), buf, sizeof buf);
    if (n > 0) return (void)into.append(buf, static_cast<size_t>(n));
    if (n == 0 || (errno != EINTR && errno != EAGAIN)) pipe.reset();
  }

  Napi::Promise::Deferred deferred_;
  uint64_t id_;
  std::string path_;
  std::vector<std::string> environment_;
  Pipe in_, out_, err_;
  std::string input_;
  pid_t pid_ = -1;
  bool cancelled_ = false;
  std::string stdout_, stderr_;
  int status_ = 0;
  int spawn_errno_ = 0;
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
  uint64_t id;
  {
    std::lock_guard<std::mutex> hold(Running().lock);
    id = Running().next_id++;
    Running().programs[id] = 0;
  }
  auto* run = new ProgramRun(env, id, std::move(path), std::move(env_strings), std::move(in), std::move(out), std::move(err),
                             std::string(input.Data(), input.Length()));
  Napi::Object started = Napi::Object::New(env);
  started.Set("id", Napi::Number::New(env, static_cast<double>(id)));
  started.Set("exit", run->Promise());
  // The pending settle keeps the event loop alive while the program runs, as the work of an AsyncWorker did.
  try {
    RunOnOwnThread(env, "netns:runProgram", run);
  } catch (const std::system_error& error) {
    // No thread (EAGAIN: the thread limit): nothing was started.
    {
      std::lock_guard<std::mutex> hold(Running().lock);
      Running().programs.erase(id);
    }
    delete run;
    throw ToJsError(env, Failure::Sys(error.code().value(), "pthread_create"));
  }
  return started;
}

Napi::Value KillProgram(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsNumber()) throw Napi::TypeError::New(env, "id must be a number");
  auto id = static_cast<uint64_t>(info[0].As<Napi::Number>().Int64Value());
  std::lock_guard<std::mutex> hold(Running().lock);
  auto found = Running().programs.find(id);
  if (found == Running().programs.end() || found->second == kCancelled) return Napi::Boolean::New(env, false);
  if (found->second > 0) kill(found->second, SIGKILL);
  else found->second = kCancelled;  // not started yet: it never will be
  return Napi::Boolean::New(env, true);
}

}  // namespace netns
