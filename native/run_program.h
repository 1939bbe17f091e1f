// Runs a program to its end with its stdin given and its stdout and stderr
// captured, for delegating to another CNI plugin (src/cni/invoke.ts) without
// loading node:child_process, which costs a one-command plugin more than the
// delegate's own run.
#pragma once
#include <napi.h>

namespace netns {

// runProgram(path, env: string[], stdin: Buffer) -> { id, exit: Promise<{ status, signal, stdout, stderr }> }.
// The program starts on a thread of its own (see spawn_child.h: it dies with
// that thread, which lives until the program is reaped), with argv [path],
// exactly `env`, default signal dispositions and an empty signal mask, and no
// descriptor of ours but its three pipes; that thread then serves the pipes
// and reaps it (not libuv's shared pool, which a slow delegate would hold; no
// namespace is entered there). A program that cannot be started (ENOENT,
// EACCES, ETXTBSY...) rejects `exit` with the errno error. status is the exit
// status (null if killed), signal the number that killed it (else null).
Napi::Value RunProgram(const Napi::CallbackInfo& info);

// killProgram(id) -> boolean: SIGKILLs a program runProgram started, if it
// has not been reaped yet (false otherwise: it had ended, or is none of
// ours); one not started yet never starts, and its exit reads as SIGKILL's.
// Never signals a pid the kernel may have reused.
Napi::Value KillProgram(const Napi::CallbackInfo& info);

}  // namespace netns
