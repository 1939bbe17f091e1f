#include "helper_status.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

static int status_fd = -1;

void status_open(int fd) {
  status_fd = fd;
  if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) report("status-pipe", errno);
}

void report(const char *stage, int err) {
  char line[64];
  int len = snprintf(line, sizeof line, "%s %d\n", stage, err);
  if (status_fd < 0 || write(status_fd, line, (size_t)len) < 0) {
    /* nothing more can be said; the exit code still tells the parent */
  }
  _exit(127);
}

/*
 * The kernel sends the parent-death signal when the thread that forked us
 * exits. A parent gone before prctl has already handed us to a reaper and no
 * signal will come, so the pid it gave us is compared with getppid() and we
 * die now. The signal survives exec (unless the command is set-user-ID or has
 * file capabilities), so it guards the command, not only this helper.
 */
void die_with_parent(int signal, pid_t parent) {
  if (signal == 0) return;
  if (prctl(PR_SET_PDEATHSIG, signal) != 0) report("prctl", errno);
  if (getppid() == parent) return;
  kill(getpid(), signal);
  _exit(128 + signal); /* a signal whose default is to ignore: the command still must not start */
}
