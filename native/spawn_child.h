#pragma once
#include <sys/types.h>

namespace netns {

// What a started program gets: its path, argv and envp (NULL-terminated), and
// the descriptors that become its stdin, stdout and stderr.
struct ChildProgram {
  const char* path;
  char* const* argv;
  char* const* envp;
  int stdio[3];
};

// Starts `program` as posix_spawn would (default signal dispositions, an
// empty mask, the three descriptors dup2'ed, every other of ours
// close-on-exec) and, unlike it, with PR_SET_PDEATHSIG = SIGKILL: a plugin
// killed by its runtime (a deadline's SIGKILL, where nothing of ours runs)
// takes its delegate with it, so an abandoned ADD's IPAM cannot allocate
// after the runtime's DEL released. The kernel sends it when the *thread*
// that started the program exits: call this on a thread that lives until the
// program is reaped (run_program.cc's thread per program). Returns the pid, or -errno when
// the program could not be started (the exec's own error, as posix_spawn
// reports it).
pid_t SpawnDyingWithParent(const ChildProgram& program);

}  // namespace netns
