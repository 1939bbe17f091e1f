#include "io_pool.h"

#include <pthread.h>

#include <chrono>
#include <system_error>
#include <utility>

#include "js_error.h"
#include "scope_exit.h"
#include "thread_switch.h"

namespace netns {
namespace {

// A caller issuing one operation at a time gets its result without a trip
// through the event loop if the I/O thread finishes within this budget; an
// idle I/O thread polls this long for the next job before it sleeps.
constexpr auto kInlineWait = std::chrono::microseconds(40);
constexpr auto kIdlePoll = std::chrono::microseconds(60);
constexpr int kMissesBeforeBackoff = 4;
constexpr int kBackoffJobs = 32;

template <typename Ready>
bool PollFor(std::chrono::microseconds budget, Ready ready) {
  auto deadline = std::chrono::steady_clock::now() + budget;
  for (unsigned i = 1;; i++) {
    if (ready()) return true;
    if ((i & 63) == 0 && std::chrono::steady_clock::now() > deadline) return false;
  }
}

// I/O thread: runs one job at home or inside its namespace, then comes home.
void RunJob(ThreadSwitch& home, IoJob& job) {
  if (job.ns_fd() >= 0) {
    if (auto failure = home.Enter(job.ns_fd())) return job.Fail(*failure);
  }
  job.Run(home);
  if (home.Restore()) job.poisoned_thread = true;
}

// What the job's promise settles with. A JavaScript exception thrown while
// building it (e.g. by a setter on Object.prototype) becomes the rejection.
std::pair<bool, Napi::Value> Outcome(Napi::Env env, IoJob& job) {
  try {
    if (job.failure()) return {false, ToJsError(env, *job.failure()).Value()};
    return {true, job.Result(env)};
  } catch (const Napi::Error& error) {
    return {false, error.Value()};
  }
}

}  // namespace

IoPool& IoPool::Start(Napi::Env env, size_t max_threads) {
  auto* pool = new IoPool(env, max_threads);  // freed by its thread-safe function's finalizer
  if (napi_add_env_cleanup_hook(env, &IoPool::Teardown, pool) != napi_ok) {
    pool->tsfn_.Release();  // no thread exists yet
    throw Napi::Error::New(env, "cannot register a cleanup hook for the I/O threads");
  }
  return *pool;
}

IoPool::IoPool(Napi::Env env, size_t max_threads) : max_threads_(max_threads) {
  tsfn_ = Tsfn::New(env, "netns-io", 0, 1, this, &IoPool::Free);
  tsfn_.Unref(env);
}

void IoPool::Submit(Napi::Env env, std::unique_ptr<IoJob> job) {
  if (in_flight_++ == 0) tsfn_.Ref(env);
  IoJob* raw = job.get();
  const bool wait_inline = in_flight_ == 1 && inline_backoff_ == 0;
  if (inline_backoff_ > 0) inline_backoff_--;
  if (!wait_inline) raw->handoff.store(IoJob::kViaCallback, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(job));
    queued_.fetch_add(1, std::memory_order_release);
  }
  cv_.notify_one();
  ReapExited();
  if (SpawnIfNeeded(env)) return;  // the job could not run and is settled already
  if (wait_inline && AwaitInline(raw)) Settle(env, std::unique_ptr<IoJob>(raw));
}

// JS thread: waits a little for the job just submitted. True when the I/O
// thread finished it and handed it over; false when the callback will bring it.
bool IoPool::AwaitInline(IoJob* job) {
  bool done = PollFor(kInlineWait, [job] { return job->handoff.load(std::memory_order_acquire) == IoJob::kDone; });
  int expected = IoJob::kQueued;
  if (!done && job->handoff.compare_exchange_strong(expected, IoJob::kViaCallback, std::memory_order_acq_rel)) {
    if (++inline_misses_ >= kMissesBeforeBackoff) {
      inline_misses_ = 0;
      inline_backoff_ = kBackoffJobs;
    }
    return false;
  }
  inline_misses_ = 0;
  return true;
}

// JS thread. Creating a thread can fail (EAGAIN at a thread or pids limit).
// std::system_error is no Napi::Error: escaping into node-addon-api it would
// abort the process. A live thread still serves the queue, so the failure is
// ignored then; with none live, nothing would ever run the queued jobs, so
// they are rejected with the cause. True when it settled jobs that way.
bool IoPool::SpawnIfNeeded(Napi::Env env) {
  std::deque<std::unique_ptr<IoJob>> stranded;
  int err = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    size_t live = 0;
    for (auto& slot : slots_) live += slot->exited ? 0 : 1;
    if (idle_threads_ >= queue_.size() || live >= max_threads_) return false;
    auto slot = std::make_unique<Slot>();
    Slot* raw = slot.get();
    try {
      slot->thread = std::thread([this, raw] { ThreadMain(raw); });
    } catch (const std::system_error& error) {
      if (live > 0) return false;
      err = error.code().value();
      stranded.swap(queue_);
      queued_.store(0, std::memory_order_relaxed);
    }
    if (stranded.empty()) {
      slots_.push_back(std::move(slot));
      threads_created_++;
      return false;
    }
  }
  for (auto& job : stranded) {
    job->Fail(Failure::Sys(err, "pthread_create"));
    Settle(env, std::move(job));  // its scope guard keeps in_flight_ and the tsfn ref right
  }
  return true;
}

// Joins threads that left after a failed restore (JS thread).
void IoPool::ReapExited() {
  std::vector<std::unique_ptr<Slot>> finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = slots_.begin(); it != slots_.end();) {
      if ((*it)->exited) {
        finished.push_back(std::move(*it));
        it = slots_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& slot : finished) slot->thread.join();
}

std::unique_ptr<IoJob> IoPool::NextJob() {
  PollFor(kIdlePoll, [this] { return queued_.load(std::memory_order_acquire) > 0; });
  std::unique_lock<std::mutex> lock(mu_);
  idle_threads_++;
  cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
  idle_threads_--;
  if (stopping_) return nullptr;
  std::unique_ptr<IoJob> job = std::move(queue_.front());
  queue_.pop_front();
  queued_.fetch_sub(1, std::memory_order_relaxed);
  return job;
}

// I/O thread: hands a finished job to a JS thread waiting for it, or else
// through the thread-safe function.
void IoPool::Deliver(std::unique_ptr<IoJob> job) {
  int expected = IoJob::kQueued;
  if (job->handoff.compare_exchange_strong(expected, IoJob::kDone, std::memory_order_acq_rel)) {
    job.release();  // the waiting JS thread owns it now
    return;
  }
  if (tsfn_.BlockingCall(job.get()) == napi_ok) job.release();
}

void IoPool::ThreadMain(Slot* slot) {
  pthread_setname_np(pthread_self(), "netns-io");
  ThreadSwitch home;
  if (auto failure = home.Init()) return FailAndLeave(slot, *failure);
  for (;;) {
    std::unique_ptr<IoJob> job = NextJob();
    if (!job) break;
    RunJob(home, *job);
    // never run another job in an unknown namespace
    if (job->poisoned_thread) return Leave(slot, std::move(job));
    Deliver(std::move(job));
  }
  std::lock_guard<std::mutex> lock(mu_);
  slot->exited = true;
}

// I/O thread that could not start: it never switches; it tells the caller of
// one job why, and leaves so that the JS thread starts a fresh one.
void IoPool::FailAndLeave(Slot* slot, const Failure& failure) {
  std::unique_ptr<IoJob> job = NextJob();
  if (job) job->Fail(failure);
  Leave(slot, std::move(job));
}

// Marks the thread exited before delivering its last job, so that settling
// that job on the JS thread reaps it and starts a replacement if needed.
void IoPool::Leave(Slot* slot, std::unique_ptr<IoJob> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    slot->exited = true;
  }
  if (!job) return;
  job->thread_left = true;
  Deliver(std::move(job));
}

void IoPool::CallJs(Napi::Env env, Napi::Function, IoPool* pool, IoJob* raw) {
  std::unique_ptr<IoJob> job(raw);
  if (env == nullptr) return;  // the environment is gone: the job is dropped unsettled
  pool->Settle(env, std::move(job));
}

void IoPool::Settle(Napi::Env env, std::unique_ptr<IoJob> job) {
  ScopeExit finished([this, env] { Finished(env); });
  if (job->thread_left) {
    if (job->poisoned_thread) threads_discarded_++;
    ReapExited();
    SpawnIfNeeded(env);
  }
  auto [resolved, value] = Outcome(env, *job);
  // A deferred is freed by its first settle, whatever it returns: settle once.
  if (resolved) {
    job->deferred().Resolve(value);
  } else {
    job->deferred().Reject(value);
  }
}

// JS thread, once per job however settling went: the event loop is kept
// alive only while jobs are in flight.
void IoPool::Finished(Napi::Env env) noexcept {
  if (--in_flight_ == 0) napi_unref_threadsafe_function(env, tsfn_);
}

// A job still running finishes first; its result goes to the thread-safe
// function, which drops it unsettled once the environment is gone (CallJs).
void IoPool::Teardown(void* data) {
  auto* pool = static_cast<IoPool*>(data);
  {
    std::lock_guard<std::mutex> lock(pool->mu_);
    pool->stopping_ = true;
  }
  pool->cv_.notify_all();
  for (auto& slot : pool->slots_) {
    if (slot->thread.joinable()) slot->thread.join();
  }
  pool->queue_.clear();
  pool->tsfn_.Release();
}

}  // namespace netns
