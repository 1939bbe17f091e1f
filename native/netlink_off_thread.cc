#include "netlink_off_thread.h"

#include <memory>
#include <optional>
#include <system_error>
#include <utility>

#include "failure.h"
#include "js_error.h"
#include "netlink.h"
#include "own_thread.h"

namespace netns {
namespace {

// One transaction: run on its thread, settled on the JS thread.
class OffThreadTransaction {
 public:
  OffThreadTransaction(Napi::Env env, int fd, std::vector<uint8_t> request, uint32_t first_seq, uint32_t count, bool quiet)
      : deferred_(Napi::Promise::Deferred::New(env)), fd_(fd), request_(std::move(request)), first_seq_(first_seq), count_(count), quiet_(quiet) {}

  Napi::Promise Promise() const { return deferred_.Promise(); }

  void Run() {
    NetlinkTransaction tx{request_.data(), request_.size(), first_seq_, count_, quiet_};
    failure_ = NetlinkTransact(fd_, tx, replies_);
  }

  // env is null when the environment is being torn down: nothing is settled then.
  static void Settle(Napi::Env env, Napi::Function, std::nullptr_t*, OffThreadTransaction* run) {
    std::unique_ptr<OffThreadTransaction> owned(run);
    if (env == nullptr) return;
    if (run->failure_) return run->deferred_.Reject(ToJsError(env, *run->failure_).Value());
    if (run->replies_.only_acks) return run->deferred_.Resolve(env.Null());
    run->deferred_.Resolve(Napi::Buffer<uint8_t>::Copy(env, run->replies_.bytes.data(), run->replies_.bytes.size()));
  }

 private:
  Napi::Promise::Deferred deferred_;
  int fd_;
  std::vector<uint8_t> request_;
  uint32_t first_seq_;
  uint32_t count_;
  bool quiet_;
  NetlinkReplies replies_;
  std::optional<Failure> failure_;
};

}  // namespace

Napi::Promise TransactOffThread(Napi::Env env, int fd, std::vector<uint8_t> request, uint32_t first_seq, uint32_t count, bool quiet) {
  auto* run = new OffThreadTransaction(env, fd, std::move(request), first_seq, count, quiet);
  Napi::Promise promise = run->Promise();
  try {
    RunOnOwnThread(env, "netns:netlinkTransactOffThread", run);
  } catch (const std::system_error& error) {
    delete run;
    throw ToJsError(env, Failure::Sys(error.code().value(), "pthread_create"));
  }
  return promise;
}

}  // namespace netns
