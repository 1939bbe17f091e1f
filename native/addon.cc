// Entry point: one NetnsAddon per Node environment (main thread or Worker), so
// every piece of state belongs to the thread that loaded the addon.
#include <napi.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "capabilities.h"
#include "js_error.h"
#include "nsfd.h"
#include "thread_switch.h"

namespace netns {
namespace {

Napi::Object IdentityObject(Napi::Env env, const NsIdentity& id) {
  Napi::Object obj = Napi::Object::New(env);
  obj.Set("dev", static_cast<double>(id.dev));
  obj.Set("ino", static_cast<double>(id.ino));
  return obj;
}

int FdArgument(const Napi::CallbackInfo& info, size_t index) {
  if (!info[index].IsNumber()) throw Napi::TypeError::New(info.Env(), "fd must be a number");
  return info[index].As<Napi::Number>().Int32Value();
}

}  // namespace

class NetnsAddon : public Napi::Addon<NetnsAddon> {
 public:
  NetnsAddon(Napi::Env env, Napi::Object exports) {
    DefineAddon(exports, {
        InstanceMethod("openNetns", &NetnsAddon::OpenNetnsJs),
        InstanceMethod("closeFd", &NetnsAddon::CloseFdJs),
        InstanceMethod("fdIdentity", &NetnsAddon::FdIdentityJs),
        InstanceMethod("threadNetns", &NetnsAddon::ThreadNetnsJs),
        InstanceMethod("becomeSwitchThread", &NetnsAddon::BecomeSwitchThreadJs),
        InstanceMethod("enter", &NetnsAddon::EnterJs),
        InstanceMethod("restore", &NetnsAddon::RestoreJs),
        InstanceMethod("dropEffectiveCapability", &NetnsAddon::DropEffectiveCapabilityJs),
    });
  }

 private:
  Napi::Value OpenNetnsJs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsString()) throw Napi::TypeError::New(env, "path must be a string");
    auto opened = OpenNetns(info[0].As<Napi::String>().Utf8Value());
    if (auto* failure = std::get_if<Failure>(&opened)) throw ToJsError(env, *failure);
    const NsFd& ns = std::get<NsFd>(opened);
    Napi::Object obj = IdentityObject(env, ns.id);
    obj.Set("fd", ns.fd);
    return obj;
  }

  Napi::Value CloseFdJs(const Napi::CallbackInfo& info) {
    close(FdArgument(info, 0));
    return info.Env().Undefined();
  }

  Napi::Value FdIdentityJs(const Napi::CallbackInfo& info) {
    auto checked = CheckNetnsFd(FdArgument(info, 0), "");
    if (auto* failure = std::get_if<Failure>(&checked)) throw ToJsError(info.Env(), *failure);
    return IdentityObject(info.Env(), std::get<NsIdentity>(checked));
  }

  Napi::Value ThreadNetnsJs(const Napi::CallbackInfo& info) {
    auto current = ThreadNetns();
    if (auto* failure = std::get_if<Failure>(&current)) throw ToJsError(info.Env(), *failure);
    return IdentityObject(info.Env(), std::get<NsIdentity>(current));
  }

  // Called once by a pool worker before it ever switches. The process's main
  // thread is refused: it must never change namespace.
  Napi::Value BecomeSwitchThreadJs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (gettid() == getpid())
      throw ToJsError(env, Failure::Own("ERR_NETNS_MAIN_THREAD",
                                        "the process's main thread never switches namespace"));
    if (auto failure = switch_.Init()) throw ToJsError(env, *failure);
    switch_thread_ = true;
    return env.Undefined();
  }

  Napi::Value EnterJs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!switch_thread_)
      throw ToJsError(env, Failure::Own("ERR_NETNS_MAIN_THREAD",
                                        "only a netns pool thread may switch namespace"));
    if (auto failure = switch_.Enter(FdArgument(info, 0))) throw ToJsError(env, *failure);
    return env.Undefined();
  }

  // Returns null when home again, or the Error that poisoned this thread.
  Napi::Value RestoreJs(const Napi::CallbackInfo& info) {
    if (auto failure = switch_.Restore()) return ToJsError(info.Env(), *failure).Value();
    return info.Env().Null();
  }

  Napi::Value DropEffectiveCapabilityJs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsNumber()) throw Napi::TypeError::New(env, "capability must be a number");
    if (auto failure = DropEffectiveCapability(info[0].As<Napi::Number>().Int32Value()))
      throw ToJsError(env, *failure);
    return env.Undefined();
  }

  ThreadSwitch switch_;
  bool switch_thread_ = false;
};

}  // namespace netns

using NetnsAddon = netns::NetnsAddon;
NODE_API_ADDON(NetnsAddon)
