/*
 * What the package's small executables share: a close-on-exec status pipe on
 * which a failure is written as "<stage> <errno>" (so the parent turns it into
 * a proper error instead of guessing from an exit code; EOF with nothing
 * written means the command was exec'd), and a parent-death guard.
 */
#ifndef NETNS_HELPER_STATUS_H
#define NETNS_HELPER_STATUS_H

#include <sys/types.h>

/* Makes `fd` the status pipe (close-on-exec from now on). */
void status_open(int fd);

/* Writes "<stage> <err>" on the status pipe and exits 127. */
void report(const char *stage, int err) __attribute__((noreturn));

/* PR_SET_PDEATHSIG with `signal` (0: none), dying now if `parent` is already gone. */
void die_with_parent(int signal, pid_t parent);

#endif
