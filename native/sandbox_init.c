#include "sandbox_init.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helper_status.h"

/* What the helper puts in the signals it queues to PID 1, so that PID 1 tells them from those sent to the whole group. */
enum { FROM_HELPER = 0x6e657473 };

static struct sigaction original[NSIG];
static volatile pid_t relay_target;
static pid_t relay_parent;

/*
 * SIGKILL and SIGSTOP cannot be caught, SIGCHLD is about our own children, a
 * fault's signal must not be held, and glibc keeps 32 up to SIGRTMIN for itself.
 */
static int is_relayed(int signal) {
  if (signal >= 32 && signal < SIGRTMIN) return 0;
  switch (signal) {
    case SIGKILL: case SIGSTOP: case SIGCHLD: case SIGSEGV: case SIGBUS: case SIGFPE: case SIGILL: case SIGTRAP: case SIGSYS:
      return 0;
    default:
      return 1;
  }
}

/*
 * The helper passes on what its parent (the CLI, the spawning program) sent;
 * a signal sent to the process group or by the terminal reaches the command
 * directly, so passing it on would deliver it twice.
 */
static void helper_relay(int signal, siginfo_t *info, void *context) {
  (void)context;
  if (info->si_code == SI_KERNEL || info->si_pid != relay_parent) return;
  int saved = errno;
  sigqueue(relay_target, signal, (union sigval){.sival_int = FROM_HELPER});
  errno = saved;
}

/* PID 1 passes on only what the helper queued: the rest reached the command directly. */
static void init_relay(int signal, siginfo_t *info, void *context) {
  (void)context;
  if (info->si_code != SI_QUEUE || info->si_value.sival_int != FROM_HELPER || relay_target <= 0) return;
  int saved = errno;
  kill(relay_target, signal);
  errno = saved;
}

static void relay_signals(void (*handler)(int, siginfo_t *, void *), int keep_original) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = handler;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigfillset(&action.sa_mask);
  for (int signal = 1; signal < NSIG; signal++) {
    if (is_relayed(signal)) sigaction(signal, &action, keep_original ? &original[signal] : NULL);
  }
}

/* The command gets the dispositions and mask the helper was started with. */
static void restore_signals(const sigset_t *mask) {
  for (int signal = 1; signal < NSIG; signal++) {
    if (is_relayed(signal)) sigaction(signal, &original[signal], NULL);
  }
  sigprocmask(SIG_SETMASK, mask, NULL);
}

static pid_t wait_for(pid_t child, int *status) {
  for (;;) {
    pid_t ended = waitpid(-1, status, 0);
    if (ended == child || (ended < 0 && errno != EINTR)) return ended;
  }
}

/* Dies of `signal` as the command did, without a core of our own; falls back to the shell's 128 + n. */
static void die_of(int killer) __attribute__((noreturn));
static void die_of(int killer) {
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  signal(killer, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, killer);
  sigprocmask(SIG_UNBLOCK, &only, NULL);
  raise(killer);
  _exit(128 + killer);
}

static void exec_command(char **command, const sigset_t *mask) __attribute__((noreturn));
static void exec_command(char **command, const sigset_t *mask) {
  restore_signals(mask);
  execvp(command[0], command);
  report("exec", errno);
}

/*
 * PID 1: dies with the helper (the whole sandbox with it), mounts the /proc
 * of this PID namespace (the addon finds its threads there by their ids in
 * it), runs the command, reaps what is orphaned to it, and ends when the
 * command ends: by its status, or telling the helper through `ending` which
 * signal killed it (PID 1 cannot die of it).
 */
static void run_init(char **command, int status_fd, int alive, int ending, const sigset_t *mask) __attribute__((noreturn));
static void run_init(char **command, int status_fd, int alive, int ending, const sigset_t *mask) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) report("prctl", errno);
  struct pollfd helper = {.fd = alive, .events = POLLIN};
  if (poll(&helper, 1, 0) > 0) _exit(127); /* the helper died before prctl: no signal will come */
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) report("mount-proc", errno);
  relay_signals(init_relay, 0);
  pid_t child = fork();
  if (child < 0) report("fork", errno);
  if (child == 0) exec_command(command, mask);
  relay_target = child;
  close(status_fd); /* the command's exec closes the last copy: that EOF tells Node it runs */
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  int status;
  if (wait_for(child, &status) < 0) _exit(127);
  if (!WIFSIGNALED(status)) _exit(WEXITSTATUS(status));
  unsigned char killer = (unsigned char)WTERMSIG(status);
  if (write(ending, &killer, 1) != 1) {
    /* the helper is gone: there is no one left to tell */
  }
  _exit(128 + killer);
}

void run_as_sandbox(char **command, int status_fd) {
  int alive[2], ending[2];
  if (pipe2(alive, O_CLOEXEC) != 0 || pipe2(ending, O_CLOEXEC) != 0) report("pipe", errno);
  sigset_t all, mask;
  sigfillset(&all);
  /* blocked across fork: a signal passed on before the child has its own handlers must wait, not run ours */
  sigprocmask(SIG_SETMASK, &all, &mask);
  relay_parent = getppid();
  relay_signals(helper_relay, 1);
  pid_t init = fork();
  if (init < 0) report("fork", errno);
  if (init == 0) {
    close(alive[1]);
    close(ending[0]);
    run_init(command, status_fd, alive[0], ending[1], &mask);
  }
  relay_target = init;
  close(alive[0]);
  close(ending[1]);
  close(status_fd);
  sigprocmask(SIG_SETMASK, &mask, NULL);
  int status;
  if (wait_for(init, &status) < 0) _exit(127);
  unsigned char killer;
  if (WIFSIGNALED(status)) die_of(WTERMSIG(status));
  if (read(ending[0], &killer, 1) == 1) die_of(killer);
  _exit(WEXITSTATUS(status));
}
