// The inotify instance behind NetNS.watch, opened as `ip netns monitor` opens
// its own (iproute2 ip/ipnetns.c, netns_monitor): the run directory made if
// missing, then watched for entries created and deleted. An FdWatch reads it
// on the JS thread's loop; the events are parsed in TypeScript.
#pragma once
#include <string>
#include <variant>

#include "failure.h"
#include "fd_watch.h"
#include "unique_fd.h"

namespace netns {

// A non-blocking, close-on-exec inotify descriptor watching `run_dir` for
// IN_CREATE and IN_DELETE (IN_ONLYDIR: a file there is ENOTDIR, not a watch
// that never fires).
std::variant<UniqueFd, Failure> OpenRunDirInotify(const std::string& run_dir);

// Reads whole inotify events, as many as are queued and fit.
extern const FdReader kInotifyReader;

}  // namespace netns
