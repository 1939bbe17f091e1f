// Work run on a thread of its own and settled on the JS thread, for what must
// not hold the JS thread (a blocking system call) nor libuv's shared pool (a
// slow one would hold one of its few threads, which Node's fs shares).
//
// The environment may end first (a Worker terminated or exiting): its
// thread-safe function is freed at its teardown, and a thread calling it
// afterwards crashed the process (SIGABRT in napi_call_threadsafe_function).
// A cleanup hook, added after the function (hooks run in reverse order, so
// before its own), tells the thread the environment is gone and lets the
// function go for it; the thread then drops the work. And the addon must
// outlive the thread: a Worker's teardown unloads an addon no other
// environment loaded, and the thread went on running unmapped code (SIGSEGV).
#pragma once
#include <dlfcn.h>
#include <napi.h>

#include <memory>
#include <mutex>
#include <thread>

namespace netns {
namespace own_thread {

template <typename Work>
struct State;

// What the thread hands to the JS thread.
template <typename Work>
struct Done {
  Work* work;
  std::shared_ptr<State<Work>> state;
};

template <typename Work>
void CallJs(Napi::Env env, Napi::Function fn, std::nullptr_t* context, Done<Work>* done);

template <typename Work>
using SettleTsfn = Napi::TypedThreadSafeFunction<std::nullptr_t, Done<Work>, &CallJs<Work>>;

// Shared by the thread, the JS thread's settle and the environment's cleanup hook.
template <typename Work>
struct State {
  std::mutex lock;
  bool env_gone = false;
  bool released = false;  // the function, let go by the thread or by the hook
  SettleTsfn<Work> settle;
  std::shared_ptr<State>* hook_ref = nullptr;  // the hook's own reference, while it is registered
};

// The environment is ending, on its JS thread.
template <typename Work>
void CleanupHook(void* arg) {
  std::unique_ptr<std::shared_ptr<State<Work>>> ref(static_cast<std::shared_ptr<State<Work>>*>(arg));
  State<Work>& state = **ref;
  std::lock_guard<std::mutex> hold(state.lock);
  state.env_gone = true;
  if (!state.released) state.settle.Release();
  state.released = true;
}

// On the JS thread; env is null when the environment is being torn down.
template <typename Work>
void CallJs(Napi::Env env, Napi::Function fn, std::nullptr_t* context, Done<Work>* done) {
  std::unique_ptr<Done<Work>> owned(done);
  bool gone;
  {
    std::lock_guard<std::mutex> hold(done->state->lock);
    gone = done->state->env_gone;
  }
  if (env == nullptr || gone) return Work::Settle(Napi::Env(nullptr), fn, context, done->work);
  napi_remove_env_cleanup_hook(env, &CleanupHook<Work>, done->state->hook_ref);
  delete done->state->hook_ref;
  Work::Settle(env, fn, context, done->work);
}

// Marks this library never to be unloaded (RTLD_NODELETE), once.
inline void PinLibrary() {
  static std::once_flag pinned;
  std::call_once(pinned, [] {
    Dl_info self;
    if (dladdr(reinterpret_cast<void*>(&PinLibrary), &self) != 0 && self.dli_fname != nullptr) {
      dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);  // a reference never dropped
    }
  });
}

}  // namespace own_thread

// Runs work->Run() on a new thread, then Work::Settle on the JS thread of
// `env` (which owns and deletes `work`; with a null env when the environment
// has ended, to delete it unsettled). The pending settle keeps the event loop
// alive. Throws std::system_error when no thread can be made; `work` is then
// still the caller's.
template <typename Work>
void RunOnOwnThread(Napi::Env env, const char* resource, Work* work) {
  own_thread::PinLibrary();
  auto state = std::make_shared<own_thread::State<Work>>();
  state->settle = own_thread::SettleTsfn<Work>::New(env, resource, 0, 1);
  state->hook_ref = new std::shared_ptr<own_thread::State<Work>>(state);
  napi_add_env_cleanup_hook(env, &own_thread::CleanupHook<Work>, state->hook_ref);
  auto* done = new own_thread::Done<Work>{work, state};
  try {
    std::thread([done, state]() {
      done->work->Run();
      std::lock_guard<std::mutex> hold(state->lock);
      if (state->env_gone) {
        delete done->work;  // nobody to tell
        delete done;
        return;
      }
      if (state->settle.BlockingCall(done) != napi_ok) {
        delete done->work;
        delete done;
      }
      state->settle.Release();
      state->released = true;
    }).detach();
  } catch (...) {
    napi_remove_env_cleanup_hook(env, &own_thread::CleanupHook<Work>, state->hook_ref);
    delete state->hook_ref;
    delete done;
    state->settle.Release();
    throw;
  }
}

}  // namespace netns
