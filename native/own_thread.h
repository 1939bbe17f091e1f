// Work run on a thread of its own and settled on the JS thread, for what must
// not hold the JS thread (a blocking system call) nor libuv's shared pool (a
// slow one would hold one of its few threads, which Node's fs shares).
#pragma once
#include <napi.h>

#include <thread>

namespace netns {

// Runs work->Run() on a new thread, then Work::Settle on the JS thread of
// `env` (which owns and deletes `work`; if the environment is closing, the
// work is deleted unsettled). The pending settle keeps the event loop alive.
// Throws std::system_error when no thread can be made; `work` is then still
// the caller's.
template <typename Work>
void RunOnOwnThread(Napi::Env env, const char* resource, Work* work) {
  using SettleTsfn = Napi::TypedThreadSafeFunction<std::nullptr_t, Work, &Work::Settle>;
  auto settle = SettleTsfn::New(env, resource, 0, 1);
  try {
    std::thread([settle, work]() mutable {
      work->Run();
      if (settle.BlockingCall(work) != napi_ok) delete work;  // the environment is closing: nobody to tell
      settle.Release();
    }).detach();
  } catch (...) {
    settle.Release();
    throw;
  }
}

}  // namespace netns
