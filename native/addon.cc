// Entry point: one NetnsAddon per Node environment (main thread or Worker), so
// every piece of state belongs to the thread that loaded the addon.
#include <napi.h>
#include <unistd.h>

#include <fcntl.h>
#include <sys/socket.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <memory>

#include "capabilities.h"
#include "fd_watch.h"
#include "file_lock.h"
#include "io_jobs.h"
#include "io_pool.h"
#include "js_error.h"
#include "lifecycle_jobs.h"
#include "netlink.h"
#include "netlink_off_thread.h"
#include "netlink_watch.h"
#include "nsfd.h"
#include "packet_capture.h"
#include "packet_ring.h"
#include "recv_fd.h"
#include "run_dir_watch.h"
#include "run_program.h"
#include "thread_home.h"
#include "thread_switch.h"
#include "unique_fd.h"

namespace netns {
namespace {

Napi::Object IdentityObject(Napi::Env env, const NsIdentity& id) {
  Napi::Object obj = Napi::Object::New(env);
  obj.Set("dev", static_cast<double>(id.dev));
  obj.Set("ino", static_cast<double>(id.ino));
  return obj;
}

int IntArgument(const Napi::CallbackInfo& info, size_t index, const char* what) {
  if (!info[index].IsNumber()) throw Napi::TypeError::New(info.Env(), std::string(what) + " must be a number");
  return info[index].As<Napi::Number>().Int32Value();
}

int FdArgument(const Napi::CallbackInfo& info, size_t index) { return IntArgument(info, index, "fd"); }

std::string StringArgument(const Napi::CallbackInfo& info, size_t index, const char* what) {
  if (!info[index].IsString()) throw Napi::TypeError::New(info.Env(), std::string(what) + " must be a string");
  return info[index].As<Napi::String>().Utf8Value();
}

// Each job owns its own descriptor, so closing the NetNS handle meanwhile is
// safe; until the job holds it, the UniqueFd closes it if anything throws.
UniqueFd DupFd(Napi::Env env, int fd) {
  UniqueFd dup(fcntl(fd, F_DUPFD_CLOEXEC, 3));
  if (!dup.valid()) throw ToJsError(env, Failure::Sys(errno, "fcntl"));
  return dup;
}

constexpr size_t kIoThreads = 2;

}  // namespace

class NetnsAddon : public Napi::Addon<NetnsAddon> {
 public:
  // Which thread loads the addon is fixed for the environment's life: learnt
  // once, so the main thread's calls pay no extra system call.
  NetnsAddon(Napi::Env env, Napi::Object exports)
      : on_main_thread_(gettid() == getpid()), watch_class_(Napi::Persistent(FdWatch::Define(env))) {
    DefineAddon(exports, {
        InstanceMethod("openNetns", &NetnsAddon::OpenNetnsJs),
        InstanceMethod("openNetnsIdentity", &NetnsAddon::OpenNetnsIdentityJs),
        InstanceMethod("closeFd", &NetnsAddon::CloseFdJs),
        InstanceMethod("strerror", &NetnsAddon::StrerrorJs),
        InstanceMethod("tryLockFile", &NetnsAddon::TryLockFileJs),
        InstanceMethod("peerCredentials", &NetnsAddon::PeerCredentialsJs),
        InstanceMethod("receiveRights", &NetnsAddon::ReceiveRightsJs),
        InstanceMethod("pipe", &NetnsAddon::PipeJs),
        InstanceMethod("threadNetns", &NetnsAddon::ThreadNetnsJs),
        InstanceMethod("becomeSwitchThread", &NetnsAddon::BecomeSwitchThreadJs),
        InstanceMethod("enter", &NetnsAddon::EnterJs),
        InstanceMethod("restore", &NetnsAddon::RestoreJs),
        InstanceMethod("dropEffectiveCapability", &NetnsAddon::DropEffectiveCapabilityJs),
        InstanceMethod("ioSocket", &NetnsAddon::IoSocketJs),
        InstanceMethod("ioBind", &NetnsAddon::IoBindJs),
        InstanceMethod("ioReadFile", &NetnsAddon::IoReadFileJs),
        InstanceMethod("ioWriteFile", &NetnsAddon::IoWriteFileJs),
        InstanceMethod("ioStats", &NetnsAddon::IoStatsJs),
        InstanceMethod("netlinkOpen", &NetnsAddon::NetlinkOpenJs),
        InstanceMethod("netlinkOpenHere", &NetnsAddon::NetlinkOpenHereJs),
        InstanceMethod("netlinkTransact", &NetnsAddon::NetlinkTransactJs),
        InstanceMethod("netlinkTransactOffThread", &NetnsAddon::NetlinkTransactOffThreadJs),
        InstanceMethod("netlinkSubscribe", &NetnsAddon::NetlinkSubscribeJs),
        InstanceMethod("netlinkWatch", &NetnsAddon::NetlinkWatchJs),
        InstanceMethod("runDirWatch", &NetnsAddon::RunDirWatchJs),
        InstanceMethod("packetOpen", &NetnsAddon::PacketOpenJs),
        InstanceMethod("packetCapture", &NetnsAddon::PacketCaptureJs),
        InstanceMethod("socketNetns", &NetnsAddon::SocketNetnsJs),
        InstanceMethod("createNamespace", &NetnsAddon::CreateNamespaceJs),
        InstanceMethod("deleteNamespace", &NetnsAddon::DeleteNamespaceJs),
        InstanceMethod("attachNamespace", &NetnsAddon::AttachNamespaceJs),
        InstanceMethod("runProgram", &NetnsAddon::RunProgramJs),
        InstanceMethod("killProgram", &NetnsAddon::KillProgramJs),
    });
  }

 private:
  Napi::Value OpenNetnsJs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsString()) throw Napi::TypeError::New(env, "path must be a string");
    auto opened = OpenNetns(info[0].As<Napi::String>().Utf8Value());
    if (auto* failure = std::get_if<Failure>(&opened)) throw ToJsError(env, *failure);
    NsFd& ns = std::get<NsFd>(opened);
    Napi::Object obj = IdentityObject(env, ns.id);
    obj.Set("fd", ns.fd.get());
    ns.fd.release();  // JavaScript owns it now
    return obj;
  }

  // The identity of a namespace path, validated, without keeping it open.
  Napi::Value OpenNetnsIdentityJs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto opened = OpenNetns(StringArgument(info, 0, "path"));
    if (auto* failure = std::get_if<Failure>(&opened)) throw ToJsError(env, *failure);
    return IdentityObject(env, std::get<NsFd>(opened).id);
  }

  // A real pipe (O_CLOEXEC both ends): some programs (nft) open /dev/stdin by
  // path, which fails on the socketpair Node uses for a 'pipe' stdio.
  Napi::Value PipeJs(const Napi::CallbackInfo& info) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw ToJsError(info.Env(), Failure::Sys(errno, "pipe2"));
    UniqueFd read_end(fds[0]);
    UniqueFd write_end(fds[1]);
    Napi::Object ends = Napi::Object::New(info.Env());
    ends.Set("read", read_end.get());
    ends.Set("write", write_end.get());
    read_end.release();  // JavaScript owns both ends now
    write_end.release();
    return ends;
  }

  // JavaScript hands back a descriptor it owned, to be closed.
  Napi::Value CloseFdJs(const Napi::CallbackInfo& info) {
    UniqueFd closing(FdArgument(info, 0));
    return info.Env().Undefined();
  }

  // -1 while another open file description holds the lock (see file_lock.h).
  Napi::Value TryLockFileJs(const Napi::CallbackInfo& info) {
    auto locked = TryLockFile(StringArgument(info, 0, "path"));
    if (auto* failure = std::get_if<Failure>(&locked)) throw ToJsError(info.Env(), *failure);
    return Napi::Number::New(info.Env(), std::get<int>(locked));
  }

  // Who is at the other end of a connected unix socket (SO_PEERCRED: the
  // credentials it had when it connected); Node does not expose them. The
  // descriptor stays JavaScript's (a net.Socket's).
  Napi::Value PeerCredentialsJs(const Napi::CallbackInfo& info) {
    int fd = FdArgument(info, 0);
    struct ucred cred = {};
    socklen_t length = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0) {
      throw ToJsError(info.Env(), Failure::Sys(errno, "getsockopt", "SO_PEERCRED"));
    }
    Napi::Object peer = Napi::Object::New(info.Env());
    peer.Set("pid", static_cast<double>(cred.pid));
    peer.Set("uid", static_cast<double>(cred.uid));
    peer.Set("gid", static_cast<double>(cred.gid));
    return peer;
  }

  // receiveRights(socketFd, onData) -> an FdWatch that reads once (see
  // recv_fd.h). It polls a duplicate: the socket stays its net.Socket's, to
  // be resumed once the watch is closed.
  Napi::Value ReceiveRightsJs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    UniqueFd dup = DupFd(env, FdArgument(info, 0));
    Napi::Number fd = Napi::Number::New(env, dup.release());
    return NewWatch(fd, info[1], kRightsReader);
  }

  // strerror(errno): Node's negative errno or a positive one.
  Napi::Value StrerrorJs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsNumber()) throw Napi::TypeError::New(env, "errno must be a number");
    double err = std::fabs(info[0].As<Napi::Number>().DoubleValue());
    if (!(err <= INT_MAX) || err != std::floor(err)) throw Napi::RangeError::New(env, "errno must be an integer");
    return Napi::String::New(env, StrError(static_cast<int>(err)));
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
    if (on_main_thread_)
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

  // The I/O threads are created from this environment's JS thread; a pool
  // worker's JS thread may be switched, so it gets none. Any other thread
  // but the main one (which never switches) is asked whether it is switched,
  // on every call: another copy of the addon may have switched it.
  IoPool& Io(Napi::Env env) {
    if (switch_thread_)
      throw ToJsError(env, Failure::Own("ERR_NETNS_SWITCHED_THREAD",
                                        "NetNS I/O methods cannot be used inside withNetNS's fn: it already "
                                        "runs in its namespace, so create sockets and processes directly"));
    if (!on_main_thread_) {
      if (auto failure = CheckThreadAtHome()) throw ToJsError(env, *failure);
    }
    if (!io_) io_ = &IoPool::Start(env, kIoThreads);
    return *io_;
  }

  // Refuses before anything is made (a job holds a Deferred and an fd), then
  // makes the job and queues it.
  template <typename MakeJob>
  Napi::Value Submit(Napi::Env env, MakeJob make_job) {
    IoPool& io = Io(env);
    std::unique_ptr<IoJob> job = make_job();
    Napi::Promise promise = job->promise();
    io.Submit(env, std::move(job));
    return promise;
  }

  // ioSocket(nsFd, domain, type, protocol) -> Promise<fd>
  Napi::Value IoSocketJs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    int domain = IntArgument(info, 1, "domain");
    int type = IntArgument(info, 2, "type");
    int protocol = IntArgument(info, 3, "protocol");
    return Submit(env, [&] {
      return std::make_unique<SocketJob>(env, DupFd(env, FdArgument(info, 0)), domain, type, protocol);
    });
  }

  // netlinkOpen(nsFd, protocol) -> Promise<{ fd, portId }>
  Napi::Value NetlinkOpenJs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    int protocol = IntArgument(info, 1, "protocol");
    return Submit(env, [&] {
      return std::make_unique<NetlinkSocketJob>(env, DupFd(env, FdArgument(info, 0)), protocol);
    });
  }

  // netlinkOpenHere(protocol) -> { fd, portId }: made on this thread, in its
  // namespace, without any switch (see netlink.h).
  Napi::Value NetlinkOpenHereJs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    int protocol = IntArgument(info, 0, "protocol");
    UniqueFd fd;
    uint32_t port_id = 0;
    if (auto failure = OpenNetlinkHere(protocol, fd, port_id)) throw ToJsError(env, *failure);
    Napi::Object result = Napi::Object::New(env);
    result.Set("portId", Napi::Number::New(env, port_id));
    result.Set("fd", Napi::Number::New(env, fd.release()));  // from here JavaScript owns the descriptor
    return result;
  }

  // netlinkTransact(fd, request, firstSeq, count, quiet?) -> Buffer, or null
  // when every request was simply acknowledged (quiet: nothing came back): runs on this
  // thread, which waits as long as the kernel takes (see netlink.h); for requests
  // that take it milliseconds, netlinkTransactOffThread.
  Napi::Value NetlinkTransactJs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::Buffer<uint8_t> request = RequestArgument(info);
    NetlinkTransaction tx{request.Data(), request.Length(), static_cast<uint32_t>(IntArgument(info, 2, "firstSeq")),
                          CountArgument(info), QuietArgument(info)};
    NetlinkReplies replies;
    if (auto failure = NetlinkTransact(FdArgument(info, 0), tx, replies)) throw ToJsError(env, *failure);
    if (replies.only_acks) return env.Null();
    return Napi::Buffer<uint8_t>::Copy(env, replies.bytes.data(), replies.bytes.size());
  }

  // netlinkTransactOffThread(fd, request, firstSeq, count, quiet?) -> Promise of
  // what netlinkTransact returns, run on a thread of its own (netlink_off_thread.h).
  Napi::Value NetlinkTransactOffThreadJs(const Napi::CallbackInfo& info) {
    Napi::Buffer<uint8_t> request = RequestArgument(info);
    std::vector<uint8_t> bytes(request.Data(), request.Data() + request.Length());
    return TransactOffThread(info.Env(), FdArgument(info, 0), std::move(bytes), static_cast<uint32_t>(IntArgument(info, 2, "firstSeq")),
                             CountArgument(info), QuietArgument(info));
  }

  static Napi::Buffer<uint8_t> RequestArgument(const Napi::CallbackInfo& info) {
    if (!info[1].IsBuffer()) throw Napi::TypeError::New(info.Env(), "request must be a Buffer");
    return info[1].As<Napi::Buffer<uint8_t>>();
  }

  static uint32_t CountArgument(const Napi::CallbackInfo& info) {
    int count = IntArgument(info, 3, "count");
    if (count < 1) throw Napi::RangeError::New(info.Env(), "count must be at least 1");
    return static_cast<uint32_t>(count);
  }

  static bool QuietArgument(const Napi::CallbackInfo& info) { return info[4].IsBoolean() && info[4].As<Napi::Boolean>().Value(); }

  // netlinkSubscribe(fd, groups): joins multicast groups (RTNLGRP_*).
  Napi::Value NetlinkSubscribeJs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    int fd = FdArgument(info, 0);
    if (!info[1].IsArray()) throw Napi::TypeError::New(env, "groups must be an array");
    Napi::Array list = info[1].As<Napi::Array>();
    std::vector<int> groups;
    for (uint32_t i = 0; i < list.Length(); i++) {
      Napi::Value group = list.Get(i);
      if (!group.IsNumber()) throw Napi::TypeError::New(env, "groups must be numbers");
      groups.push_back(group.As<Napi::Number>().Int32Value());
    }
    if (auto failure = NetlinkSubscribe(fd, groups)) throw ToJsError(env, *failure);
    return env.Undefined();
  }

  // netlinkWatch(fd, onData) -> an FdWatch owning fd (see fd_watch.h)
  Napi::Value NetlinkWatchJs(const Napi::CallbackInfo& info) { return NewWatch(info[0], info[1], kNetlinkReader); }

  // runDirWatch(runDir, onData) -> an FdWatch of inotify events (see run_dir_watch.h)
  Napi::Value RunDirWatchJs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::string run_dir = StringArgument(info, 0, "runDir");
    if (!info[1].IsFunction()) throw Napi::TypeError::New(env, "onData must be a function");
    auto opened = OpenRunDirInotify(run_dir);
    if (auto* failure = std::get_if<Failure>(&opened)) throw ToJsError(env, *failure);
    Napi::Number fd = Napi::Number::New(env, std::get<UniqueFd>(opened).release());
    return NewWatch(fd, info[1], kInotifyReader);
  }

  // packetOpen(nsFd, interface, snaplen) -> Promise<{ fd, linkType }> (see packet_capture.h)
  Napi::Value PacketOpenJs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::string interface = StringArgument(info, 1, "interface");
    int snaplen = IntArgument(info, 2, "snaplen");
    if (snaplen < 1 || snaplen > kMaxSnaplen) throw Napi::RangeError::New(env, "snaplen must be 1 to 262144");
    return Submit(env, [&] {
      return std::make_unique<PacketSocketJob>(env, DupFd(env, FdArgument(info, 0)), std::move(interface),
                                               snaplen);
    });
  }

  // packetCapture(fd, fileFd) -> { done, stop, written }: reads the socket's ring into the file (see packet_ring.h)
  Napi::Value PacketCaptureJs(const Napi::CallbackInfo& info) {
    UniqueFd socket(FdArgument(info, 0));  // ours from here, closed even if the rest throws
    return StartPacketCapture(info.Env(), std::move(socket), FdArgument(info, 1));
  }

  // runProgram(path, env, stdin) -> { pid, exit: Promise<{ status, signal, stdout, stderr }> } (see run_program.h)
  Napi::Value RunProgramJs(const Napi::CallbackInfo& info) { return RunProgram(info); }

  // killProgram(pid) -> whether a program runProgram started was still there to kill
  Napi::Value KillProgramJs(const Napi::CallbackInfo& info) { return KillProgram(info); }

  // socketNetns(fd) -> the fd of the namespace the socket belongs to
  Napi::Value SocketNetnsJs(const Napi::CallbackInfo& info) {
    auto ns = SocketNetns(FdArgument(info, 0));
    if (auto* failure = std::get_if<Failure>(&ns)) throw ToJsError(info.Env(), *failure);
    return Napi::Number::New(info.Env(), std::get<UniqueFd>(ns).release());  // JavaScript owns it now
  }

  // ioBind(nsFd, type, host, port, unix, backlog) -> Promise<fd>
  Napi::Value IoBindJs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    BindSpec spec;
    int type = IntArgument(info, 1, "type");
    spec.host = StringArgument(info, 2, "host");
    spec.port = IntArgument(info, 3, "port");
    spec.unix_path = info[4].ToBoolean();
    spec.backlog = IntArgument(info, 5, "backlog");
    return Submit(env, [&] {
      return std::make_unique<BoundSocketJob>(env, DupFd(env, FdArgument(info, 0)), type, std::move(spec));
    });
  }

  // ioReadFile(nsFd, path) -> Promise<Buffer>
  Napi::Value IoReadFileJs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::string path = StringArgument(info, 1, "path");
    return Submit(env, [&] {
      return std::make_unique<ReadFileJob>(env, DupFd(env, FdArgument(info, 0)), std::move(path));
    });
  }

  // ioWriteFile(nsFd, path, data) -> Promise<void>
  Napi::Value IoWriteFileJs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::string path = StringArgument(info, 1, "path");
    std::string data = StringArgument(info, 2, "data");
    return Submit(env, [&] {
      return std::make_unique<WriteFileJob>(env, DupFd(env, FdArgument(info, 0)), std::move(path),
                                            std::move(data));
    });
  }

  // createNamespace(runDir, path) -> Promise<{fd, dev, ino}>; empty path: anonymous
  Napi::Value CreateNamespaceJs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::string run_dir = StringArgument(info, 0, "runDir");
    std::string path = StringArgument(info, 1, "path");
    return Submit(env, [&] { return std::make_unique<CreateNamespaceJob>(env, std::move(run_dir), std::move(path)); });
  }

  // attachNamespace(runDir, path, source) -> Promise<{fd, dev, ino}>
  Napi::Value AttachNamespaceJs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::string run_dir = StringArgument(info, 0, "runDir");
    std::string path = StringArgument(info, 1, "path");
    std::string source = StringArgument(info, 2, "source");
    return Submit(env, [&] {
      return std::make_unique<AttachNamespaceJob>(env, std::move(run_dir), std::move(path), std::move(source));
    });
  }

  // deleteNamespace(path) -> Promise<void>
  Napi::Value DeleteNamespaceJs(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::string path = StringArgument(info, 0, "path");
    return Submit(env, [&] { return std::make_unique<DeleteNamespaceJob>(env, std::move(path)); });
  }

  // The FdWatch takes `fd` first thing, so it is closed whatever throws.
  Napi::Value NewWatch(Napi::Value fd, Napi::Value on_data, const FdReader& reader) {
    Napi::Object watch = watch_class_.New({fd, on_data});
    FdWatch::Unwrap(watch)->Start(reader);
    return watch;
  }

  Napi::Value IoStatsJs(const Napi::CallbackInfo& info) {
    Napi::Object stats = Napi::Object::New(info.Env());
    stats.Set("threadsCreated", static_cast<double>(io_ ? io_->threads_created() : 0));
    stats.Set("threadsDiscarded", static_cast<double>(io_ ? io_->threads_discarded() : 0));
    return stats;
  }

  const bool on_main_thread_;
  ThreadSwitch switch_;
  bool switch_thread_ = false;
  IoPool* io_ = nullptr;  // owned by the environment's teardown (see io_pool.h)
  Napi::FunctionReference watch_class_;
};

}  // namespace netns

using NetnsAddon = netns::NetnsAddon;
NODE_API_ADDON(NetnsAddon)
