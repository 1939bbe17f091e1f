/*
 * The sandbox's PID namespace: its first process (PID 1 there) runs the
 * command and ends when the command ends, which makes the kernel kill every
 * other process left in the sandbox. Signals reach the command through the
 * helper and PID 1, each passing on only what was meant for the command.
 */
#ifndef NETNS_SANDBOX_INIT_H
#define NETNS_SANDBOX_INIT_H

/*
 * Called by the helper once it has unshared CLONE_NEWPID and made the mounts:
 * forks PID 1, which mounts the namespace's /proc and runs `command`; then
 * passes on the signals its parent sends and ends as the command ended
 * (exit status, or death by the same signal). Never returns.
 */
void run_as_sandbox(char **command, int status_fd) __attribute__((noreturn));

#endif
