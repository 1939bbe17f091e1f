#include "packet_ring.h"

#include <linux/if_packet.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>
#include <vector>

#include "failure.h"
#include "js_error.h"
#include "own_thread.h"
#include "packet_capture.h"

namespace netns {

namespace {

constexpr size_t kRingBytes = kRingBlockSize * kRingBlocks;
constexpr size_t kRecordHeader = 16;
constexpr uint64_t kNanosecondsPerSecond = 1000000000;
constexpr int kWriterNice = -10;

// What the JS thread and the ring's thread share. The socket and the wake-up
// (an eventfd) are closed by the thread once it is done, under the lock, so
// stop() never seals or wakes a descriptor number reused since.
struct Shared {
  std::mutex lock;
  UniqueFd socket;
  UniqueFd wake;
  std::atomic<uint64_t> written{0};

  // Seals the socket (its counts into `counts`) and wakes the thread to finish.
  std::optional<Failure> Stop(PacketCounts& counts) {
    std::lock_guard<std::mutex> hold(lock);
    if (!socket.valid()) return std::nullopt;
    std::optional<Failure> failure = SealPacketSocket(socket.get(), counts);
    eventfd_write(wake.get(), 1);
    return failure;
  }

  void Close() {
    std::lock_guard<std::mutex> hold(lock);
    wake.reset();
    socket.reset();
  }
};

// Held by the capture's JS functions alone: when they go (collected, or their
// environment ends) the thread is told to finish. Makes no N-API call.
class StopOnRelease {
 public:
  explicit StopOnRelease(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}
  StopOnRelease(const StopOnRelease&) = delete;
  StopOnRelease& operator=(const StopOnRelease&) = delete;
  ~StopOnRelease() {
    PacketCounts unused;
    shared_->Stop(unused);
  }
  Shared& shared() const { return *shared_; }

 private:
  std::shared_ptr<Shared> shared_;
};

uint64_t StampOf(const tpacket3_hdr* packet) {
  return packet->tp_sec * kNanosecondsPerSecond + packet->tp_nsec;
}

void PutLe32(uint8_t* at, uint32_t value) {
  for (int i = 0; i < 4; i++) at[i] = static_cast<uint8_t>(value >> (8 * i));
}

// Writes every byte of `parts` (a file may take a writev in part).
std::optional<Failure> WriteAll(int fd, std::vector<iovec>& parts) {
  size_t first = 0;
  while (first < parts.size()) {
    int count = static_cast<int>(std::min(parts.size() - first, size_t{IOV_MAX}));
    ssize_t wrote = writev(fd, &parts[first], count);
    if (wrote < 0) {
      if (errno == EINTR) continue;
      return Failure::Sys(errno, "write");
    }
    size_t left = static_cast<size_t>(wrote);
    while (first < parts.size() && left >= parts[first].iov_len) left -= parts[first++].iov_len;
    if (left > 0) {
      parts[first].iov_base = static_cast<uint8_t*>(parts[first].iov_base) + left;
      parts[first].iov_len -= left;
    }
  }
  return std::nullopt;
}

// One capture: run on its own thread, settled on the JS thread.
class RingCapture {
 public:
  RingCapture(Napi::Env env, std::shared_ptr<Shared> shared, uint8_t* ring, int file)
      : deferred_(Napi::Promise::Deferred::New(env)),
        shared_(std::move(shared)),
        ring_(ring),
        socket_(shared_->socket.get()),
        wake_(shared_->wake.get()),
        file_(file) {}
  ~RingCapture() { munmap(ring_, kRingBytes); }
  RingCapture(const RingCapture&) = delete;
  RingCapture& operator=(const RingCapture&) = delete;

  Napi::Promise Promise() const { return deferred_.Promise(); }

  void Run() {
    pthread_setname_np(pthread_self(), "netns-capture");
    RaisePriority();
    bool stopping = false;
    for (;;) {
      WriteReadyBlocks();
      if (stopping && Flushed()) break;
      if (!Wait(stopping)) break;
    }
    shared_->Close();
  }

  // env is null when the environment is being torn down: nothing is settled then.
  static void Settle(Napi::Env env, Napi::Function, std::nullptr_t*, RingCapture* run) {
    std::unique_ptr<RingCapture> owned(run);
    if (env == nullptr) return;
    if (run->failure_) return run->deferred_.Reject(ToJsError(env, *run->failure_).Value());
    Napi::Object result = Napi::Object::New(env);
    result.Set("packets", static_cast<double>(run->shared_->written.load()));
    run->deferred_.Resolve(result);
  }

 private:
  // A capture that falls behind loses packets for good, while what it holds
  // back (the test's own work) only waits: so the writer runs before a
  // machine's other work (nice -10), as far as CAP_SYS_NICE allows (without
  // it, as it is). It needs about a fifth of a CPU at 4 Gbit/s; on a busy
  // machine that is taken from the traffic too (bench/capture.js: at nice 0
  // a quarter of a flood was written there, at -5 85%, at -10 all of it).
  static void RaisePriority() {
    setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kWriterNice);
  }

  struct Record {
    uint64_t stamp;
    const tpacket3_hdr* packet;
  };

  tpacket_block_desc* Block() const {
    return reinterpret_cast<tpacket_block_desc*>(ring_ + size_t{cursor_} * kRingBlockSize);
  }

  bool Handed(const tpacket_block_desc* block) const {
    return (__atomic_load_n(&block->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER) != 0;
  }

  // Sealed: done once the block the kernel would fill next holds nothing. One
  // it holds packets in is handed over when its time is up (kRingRetireMs).
  bool Flushed() const {
    const tpacket_block_desc* block = Block();
    return !Handed(block) && __atomic_load_n(&block->hdr.bh1.num_pkts, __ATOMIC_ACQUIRE) == 0;
  }

  void WriteReadyBlocks() {
    for (tpacket_block_desc* block = Block(); Handed(block); block = Block()) {
      WriteBlock(*block);
      __atomic_store_n(&block->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
      cursor_ = (cursor_ + 1) % kRingBlocks;
    }
  }

  // After a failed write nothing more is written: the file ends whole.
  void WriteBlock(const tpacket_block_desc& block) {
    if (failure_) return;
    CollectRecords(block);
    headers_.resize(records_.size() * kRecordHeader);
    parts_.clear();
    uint8_t* header = headers_.data();
    for (const Record& record : records_) {
      last_stamp_ = std::max(last_stamp_, record.stamp);
      PutLe32(header, static_cast<uint32_t>(last_stamp_ / kNanosecondsPerSecond));
      PutLe32(header + 4, static_cast<uint32_t>(last_stamp_ % kNanosecondsPerSecond));
      PutLe32(header + 8, record.packet->tp_snaplen);
      PutLe32(header + 12, record.packet->tp_len);
      parts_.push_back({header, kRecordHeader});
      const uint8_t* frame = reinterpret_cast<const uint8_t*>(record.packet) + record.packet->tp_mac;
      parts_.push_back({const_cast<uint8_t*>(frame), record.packet->tp_snaplen});
      header += kRecordHeader;
    }
    failure_ = WriteAll(file_, parts_);
    if (!failure_) shared_->written += records_.size();
  }

  void CollectRecords(const tpacket_block_desc& block) {
    records_.clear();
    const uint8_t* at = reinterpret_cast<const uint8_t*>(&block) + block.hdr.bh1.offset_to_first_pkt;
    for (uint32_t i = 0; i < block.hdr.bh1.num_pkts; i++) {
      const auto* packet = reinterpret_cast<const tpacket3_hdr*>(at);
      records_.push_back({StampOf(packet), packet});
      at += packet->tp_next_offset;
    }
    auto earlier = [](const Record& a, const Record& b) { return a.stamp < b.stamp; };
    if (!std::is_sorted(records_.begin(), records_.end(), earlier)) std::stable_sort(records_.begin(), records_.end(), earlier);
  }

  // Until a block is handed over or stop() is called; once stopping, at most
  // kRingRetireMs: a block given back while the ring was full is reopened by
  // the kernel's timer with no wake-up. Returns false after a failed poll.
  bool Wait(bool& stopping) {
    pollfd fds[] = {{socket_, POLLIN, 0}, {wake_, POLLIN, 0}};
    int ready = poll(fds, stopping ? 1 : 2, stopping ? static_cast<int>(kRingRetireMs) : -1);
    if (ready < 0 && errno != EINTR) {
      failure_ = Failure::Sys(errno, "poll");
      return false;
    }
    if (ready > 0 && (fds[0].revents & POLLERR)) TakeSocketError();
    if (ready > 0 && (fds[1].revents & POLLIN)) stopping = true;
    return true;
  }

  // ENETDOWN: the interface went down (or away); packets come again if it
  // comes up again. Reading the error clears it, or poll would report it forever.
  void TakeSocketError() {
    int error = 0;
    socklen_t length = sizeof error;
    if (getsockopt(socket_, SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
    if (error != 0 && error != ENETDOWN && !failure_) failure_ = Failure::Sys(error, "poll");
  }

  Napi::Promise::Deferred deferred_;
  std::shared_ptr<Shared> shared_;
  uint8_t* ring_;
  int socket_;  // shared_'s, open until Run ends
  int wake_;    // likewise
  int file_;
  unsigned cursor_ = 0;  // the block to be handed over next
  uint64_t last_stamp_ = 0;
  std::vector<Record> records_;
  std::vector<uint8_t> headers_;
  std::vector<iovec> parts_;
  std::optional<Failure> failure_;
};

Napi::Function StopFunction(Napi::Env env, std::shared_ptr<StopOnRelease> control) {
  return Napi::Function::New(
      env,
      [control](const Napi::CallbackInfo& info) -> Napi::Value {
        PacketCounts counts;
        if (auto failure = control->shared().Stop(counts)) throw ToJsError(info.Env(), *failure);
        Napi::Object result = Napi::Object::New(info.Env());
        result.Set("packets", static_cast<double>(counts.packets));
        result.Set("drops", static_cast<double>(counts.drops));
        return result;
      },
      "stop");
}

Napi::Function WrittenFunction(Napi::Env env, std::shared_ptr<StopOnRelease> control) {
  return Napi::Function::New(
      env,
      [control](const Napi::CallbackInfo& info) -> Napi::Value {
        return Napi::Number::New(info.Env(), static_cast<double>(control->shared().written.load()));
      },
      "written");
}

}  // namespace

Napi::Value StartPacketCapture(Napi::Env env, UniqueFd socket, int file) {
  void* ring = mmap(nullptr, kRingBytes, PROT_READ | PROT_WRITE, MAP_SHARED, socket.get(), 0);
  if (ring == MAP_FAILED) throw ToJsError(env, Failure::Sys(errno, "mmap"));
  auto shared = std::make_shared<Shared>();
  shared->socket = std::move(socket);
  shared->wake.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!shared->wake.valid()) {
    int error = errno;
    munmap(ring, kRingBytes);
    throw ToJsError(env, Failure::Sys(error, "eventfd"));
  }
  auto* run = new RingCapture(env, shared, static_cast<uint8_t*>(ring), file);
  Napi::Promise done = run->Promise();
  try {
    RunOnOwnThread(env, "netns:packetCapture", run);
  } catch (const std::system_error& error) {
    delete run;
    throw ToJsError(env, Failure::Sys(error.code().value(), "pthread_create"));
  }
  auto control = std::make_shared<StopOnRelease>(shared);
  Napi::Object capture = Napi::Object::New(env);
  capture.Set("done", done);
  capture.Set("stop", StopFunction(env, control));
  capture.Set("written", WrittenFunction(env, control));
  return capture;
}

}  // namespace netns
