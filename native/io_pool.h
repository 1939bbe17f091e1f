// The addon's own I/O threads for one Node environment. Each thread opens its
// own namespace as home, and for every job enters the job's namespace, runs
// it and restores; a thread that cannot restore finishes its job, exits, and
// is replaced from the JS thread. A thread that cannot open its home fails
// one job with the cause and exits the same way, so a passing shortage of
// descriptors does not fail every later job. Threads are only ever created
// from the JS thread of an environment whose thread is not switched (the
// caller checks, see thread_home.h), so none inherits a foreign namespace.
// Results return through a TypedThreadSafeFunction that keeps the event loop
// alive only while jobs are in flight.
//
// Lifetime: Start registers an environment cleanup hook that joins the
// threads and releases the thread-safe function; the function's finalizer,
// after it has dropped any result still queued (CallJs with no env), frees
// the pool. Nothing else deletes it. Node finalizes instance data and
// thread-safe functions in an order of its own (Node 24+ finalizes the addon
// from inside the close of a thread-safe function, holding that function's
// lock), so no destructor that may run then makes an N-API call. The hook is
// registered after the thread-safe function, and hooks run in reverse order,
// so the pool releases its function before Node closes it. Under
// process.exit() no hook runs and the process ends with its threads.
#pragma once
#include <napi.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "io_job.h"

namespace netns {

class IoPool {
 public:
  // JS thread only. The pool lives until the environment's teardown.
  static IoPool& Start(Napi::Env env, size_t max_threads);
  IoPool(const IoPool&) = delete;
  IoPool& operator=(const IoPool&) = delete;

  // JS thread only. Takes ownership of the job.
  void Submit(Napi::Env env, std::unique_ptr<IoJob> job);

  size_t threads_created() const { return threads_created_; }
  size_t threads_discarded() const { return threads_discarded_; }

 private:
  struct Slot {
    std::thread thread;
    bool exited = false;  // guarded by mu_
  };

  IoPool(Napi::Env env, size_t max_threads);
  ~IoPool() = default;
  // The environment's cleanup hook: stops and joins every thread, drops queued
  // jobs and releases the thread-safe function.
  static void Teardown(void* pool);
  static void Free(Napi::Env, void*, IoPool* pool) { delete pool; }
  static void CallJs(Napi::Env env, Napi::Function, IoPool* pool, IoJob* job);
  void ThreadMain(Slot* slot);
  void FailAndLeave(Slot* slot, const Failure& failure);
  void Leave(Slot* slot, std::unique_ptr<IoJob> job);
  std::unique_ptr<IoJob> NextJob();
  void Deliver(std::unique_ptr<IoJob> job);
  bool AwaitInline(IoJob* job);
  bool SpawnIfNeeded(Napi::Env env);
  void ReapExited();
  void Settle(Napi::Env env, std::unique_ptr<IoJob> job);
  void Finished(Napi::Env env) noexcept;

  using Tsfn = Napi::TypedThreadSafeFunction<IoPool, IoJob, &IoPool::CallJs>;
  Tsfn tsfn_;
  const size_t max_threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<IoJob>> queue_;
  std::atomic<size_t> queued_{0};  // mirrors queue_.size() for lock-free polling
  std::vector<std::unique_ptr<Slot>> slots_;
  size_t idle_threads_ = 0;
  bool stopping_ = false;
  // JS thread only:
  size_t in_flight_ = 0;
  int inline_misses_ = 0;
  int inline_backoff_ = 0;
  size_t threads_created_ = 0;
  size_t threads_discarded_ = 0;
};

}  // namespace netns
