#include "io_pool.h"

#include <pthread.h>

#include "js_error.h"
#include "thread_switch.h"

namespace netns {

IoPool::IoPool(Napi::Env env, size_t max_threads) : max_threads_(max_threads) {
  tsfn_ = Tsfn::New(env, "netns-io", 0, 1, this);
  tsfn_.Unref(env);
}

IoPool::~IoPool() { Shutdown(); }

void IoPool::Submit(Napi::Env env, std::unique_ptr<IoJob> job) {
  if (in_flight_++ == 0) tsfn_.Ref(env);
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(job));
  }
  cv_.notify_one();
  ReapExited();
  SpawnIfNeeded();
}

void IoPool::SpawnIfNeeded() {
  std::lock_guard<std::mutex> lock(mu_);
  size_t live = 0;
  for (auto& slot : slots_) live += slot->exited ? 0 : 1;
  if (idle_threads_ >= queue_.size() || live >= max_threads_) return;
  auto slot = std::make_unique<Slot>();
  Slot* raw = slot.get();
  slot->thread = std::thread([this, raw] { ThreadMain(raw); });
  slots_.push_back(std::move(slot));
  threads_created_++;
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

void IoPool::ThreadMain(Slot* slot) {
  pthread_setname_np(pthread_self(), "netns-io");
  ThreadSwitch home;
  std::optional<Failure> init_failure = home.Init();
  for (;;) {
    std::unique_ptr<IoJob> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      idle_threads_++;
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      idle_threads_--;
      if (stopping_) break;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    if (init_failure) {
      job->Fail(*init_failure);
    } else if (auto failure = home.Enter(job->ns_fd())) {
      job->Fail(*failure);
    } else {
      job->Run();
      if (home.Restore()) job->poisoned_thread = true;
    }
    const bool leave = job->poisoned_thread;
    if (tsfn_.BlockingCall(job.get()) == napi_ok) job.release();
    if (leave) break;  // never run another job in an unknown namespace
  }
  std::lock_guard<std::mutex> lock(mu_);
  slot->exited = true;
}

void IoPool::CallJs(Napi::Env env, Napi::Function, IoPool* pool, IoJob* raw) {
  std::unique_ptr<IoJob> job(raw);
  if (env == nullptr) {
    job->Discard();  // the environment is gone: nothing to settle
    return;
  }
  pool->Settle(env, std::move(job));
}

void IoPool::Settle(Napi::Env env, std::unique_ptr<IoJob> job) {
  if (job->poisoned_thread) {
    threads_discarded_++;
    ReapExited();
    SpawnIfNeeded();
  }
  if (job->failure()) {
    job->deferred().Reject(ToJsError(env, *job->failure()).Value());
  } else {
    Napi::Value value = job->Result(env);
    if (job->poisoned_thread && value.IsObject()) value.As<Napi::Object>().Set("poisoned", true);
    job->deferred().Resolve(value);
  }
  if (--in_flight_ == 0 && !shut_down_) tsfn_.Unref(env);
}

void IoPool::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& slot : slots_) {
    if (slot->thread.joinable()) slot->thread.join();
  }
  for (auto& job : queue_) job->Discard();
  queue_.clear();
  tsfn_.Release();
}

}  // namespace netns
