// A descriptor sent over a unix stream socket (SCM_RIGHTS) with the first
// bytes of a message, read by an FdWatch (see fd_watch.h) that reads once: the
// resident CNI daemon takes its caller's network namespace this way before
// Node reads the rest of the request (Node's reads take no ancillary data, and
// the kernel closes descriptors they pass over).
//
// Record (little-endian): i32 the descriptor (O_CLOEXEC, the reader's owner's
// from here), or -1 when none came or more than one did (then all are closed);
// u32 how many came (one more when the kernel dropped some for want of room);
// u32 the bytes read; the bytes. An end of stream is a record with no bytes.
#pragma once
#include <cstddef>

#include "fd_watch.h"

namespace netns {

constexpr size_t kRightsHeader = 12;

extern const FdReader kRightsReader;

}  // namespace netns
