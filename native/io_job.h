// A unit of work that must run inside a network namespace: created on the JS
// thread, run on one of the addon's I/O threads between Enter and Restore, and
// settled back on the JS thread.
#pragma once
#include <napi.h>

#include <atomic>
#include <optional>

#include "failure.h"
#include "thread_switch.h"
#include "unique_fd.h"

namespace netns {

class IoJob {
 public:
  // Takes the namespace descriptor (invalid: the job runs at home) by value,
  // so it is closed even when making the promise throws.
  IoJob(Napi::Env env, UniqueFd ns_fd)
      : deferred_(Napi::Promise::Deferred::New(env)), ns_fd_(std::move(ns_fd)) {}
  virtual ~IoJob() = default;
  IoJob(const IoJob&) = delete;
  IoJob& operator=(const IoJob&) = delete;

  // Runs on the I/O thread: inside the job's namespace when it has one
  // (ns_fd >= 0), else at home, free to switch `thread` itself (the pool
  // restores it afterwards). Sets failure_ on error.
  virtual void Run(ThreadSwitch& thread) = 0;
  // Runs on the JS thread when Run succeeded. What it hands to JavaScript is
  // released only once nothing can throw; a job dropped unsettled (shutdown,
  // a throwing Result) closes what Run made as it is destroyed.
  virtual Napi::Value Result(Napi::Env env) = 0;

  int ns_fd() const { return ns_fd_.get(); }
  Napi::Promise promise() const { return deferred_.Promise(); }
  void Fail(Failure failure) { failure_ = std::move(failure); }
  const std::optional<Failure>& failure() const { return failure_; }
  Napi::Promise::Deferred& deferred() { return deferred_; }

  // Set by the I/O thread before it delivers the job: it could not return
  // home after this job (poisoned), or it leaves after this job for any
  // reason (poisoned, or it could not start) and must be replaced.
  bool poisoned_thread = false;
  bool thread_left = false;

  // Who settles the job. The JS thread may wait briefly for a job it just
  // submitted and settle it itself; whoever moves the state away from kQueued
  // decides: the I/O thread (kDone: the waiting JS thread owns the job now) or
  // the JS thread giving up (kViaCallback: the I/O thread delivers it).
  enum Handoff : int { kQueued, kDone, kViaCallback };
  std::atomic<int> handoff{kQueued};

 private:
  Napi::Promise::Deferred deferred_;
  UniqueFd ns_fd_;
  std::optional<Failure> failure_;
};

}  // namespace netns
