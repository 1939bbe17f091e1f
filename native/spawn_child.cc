#include "spawn_child.h"

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

namespace netns {
namespace {

// Enough for the few system calls the child makes before exec.
constexpr size_t kChildStack = 64 * 1024;

struct Start {
  const ChildProgram* program;
  pid_t parent;
  int exec_errno;  // written by the child (it shares our memory until it execs)
};

// Runs in the child, on its own stack, sharing our memory until execve: only
// system calls on what the parent prepared. Its signal handlers are a copy
// of ours (no CLONE_SIGHAND), so resetting them leaves ours alone; the parent
// blocked every signal first, so none of Node's handlers can run here.
int ChildMain(void* arg) {
  auto* start = static_cast<Start*>(arg);
  struct sigaction fallback = {};
  fallback.sa_handler = SIG_DFL;
  for (int signal = 1; signal < NSIG; signal++) sigaction(signal, &fallback, nullptr);  // EINVAL for KILL/STOP and glibc's own: harmless
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != start->parent) _exit(127);  // the parent already gone: never start
  for (int fd = 0; fd < 3; fd++) {
    if (dup2(start->program->stdio[fd], fd) < 0) {
      start->exec_errno = errno;
      _exit(127);
    }
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execve(start->program->path, start->program->argv, start->program->envp);
  start->exec_errno = errno;
  _exit(127);
}

}  // namespace

pid_t SpawnDyingWithParent(const ChildProgram& program) {
  std::unique_ptr<char[]> stack(new char[kChildStack]);
  Start start{&program, getpid(), 0};
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  // CLONE_VFORK: we resume once the child has exec'ed or exited, so exec_errno is final then.
  pid_t pid = clone(ChildMain, stack.get() + kChildStack, CLONE_VM | CLONE_VFORK | SIGCHLD, &start);
  int clone_errno = errno;
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  if (pid < 0) return -clone_errno;
  if (start.exec_errno == 0) return pid;
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  return -start.exec_errno;
}

}  // namespace netns
