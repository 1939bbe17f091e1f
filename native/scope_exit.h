// Runs a callable when the scope ends, however it ends: for bookkeeping that
// must happen even when a call into JavaScript throws.
#pragma once
#include <utility>

namespace netns {

template <typename Fn>
class ScopeExit {
 public:
  explicit ScopeExit(Fn fn) : fn_(std::move(fn)) {}
  ~ScopeExit() { fn_(); }
  ScopeExit(const ScopeExit&) = delete;
  ScopeExit& operator=(const ScopeExit&) = delete;

 private:
  Fn fn_;
};

}  // namespace netns
