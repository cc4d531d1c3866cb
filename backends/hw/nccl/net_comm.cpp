#include "backends/hw/nccl/net_comm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "backends/hw/nccl/plugin_log.hpp"

namespace railcheck::nccl {
namespace {

const char* side_name(CommSide s) { return s == CommSide::Send ? "send" : "recv"; }

// NCCL reports sizes as int; a single message never exceeds maxP2pBytes, which we keep below 2 GiB
// for v8 anyway, so the clamp only guards against a broken result.
int as_int(std::size_t v) { return static_cast<int>(std::min<std::size_t>(v, std::numeric_limits<int>::max())); }

}  // namespace

NetComm::NetComm(CommSide side, std::uint64_t serial, std::unique_ptr<StripedConnection> conn,
                 std::uint32_t max_requests, std::uint32_t max_recvs, bool early_recv_completion,
                 std::optional<FaultPlan> fault)
    : side_(side),
      serial_(serial),
      conn_(std::move(conn)),
      max_recvs_(max_recvs),
      early_recv_completion_(early_recv_completion),
      slots_(max_requests),
      ready_at_(std::chrono::steady_clock::now()),
      last_call_(ready_at_) {
  for (auto& s : slots_) s.comm = this;
  if (fault && side == CommSide::Send) {
    fault_.emplace(*fault);
    plugin_log().info("{} comm #{}: fault armed: {}", side_name(side_), serial_, describe(*fault));
  }
}

NetComm::~NetComm() {
  std::size_t outstanding = 0;
  for (const auto& s : slots_) outstanding += (s.in_use && !s.reported) ? 1 : 0;
  // NCCL closes a comm only after its requests completed; anything left is its bug or an abort.
  if (outstanding > 0)
    plugin_log().warn("{} comm #{} closed with {} requests outstanding", side_name(side_), serial_, outstanding);
  const ConnectionStats st = conn_->stats();
  plugin_log().info("{} comm #{} closed: {} messages, {} failovers, {} WRs replayed", side_name(side_), serial_,
                    messages_, st.failovers, st.replayed);
}

nccl_abi::Result NetComm::fail(const Error& e, const char* call) {
  plugin_log().warn("{} comm #{}: {} failed: {}", side_name(side_), serial_, call, e.message());
  return nccl_abi::kSystemError;
}

nccl_abi::Result NetComm::reg_mr(void* data, std::size_t size, int type, void** mhandle) {
  std::lock_guard lock(mu_);
  if (type != nccl_abi::kPtrHost) {
    // getProperties says NCCL_PTR_HOST only, so NCCL never asks for anything else.
    plugin_log().warn("{} comm #{}: regMr of type {} refused: only host memory (NCCL_PTR_HOST) is supported",
                      side_name(side_), serial_, type);
    return nccl_abi::kInvalidArgument;
  }
  auto mr = conn_->register_memory(data, size);
  if (!mr) return fail(mr.error(), "regMr");
  *mhandle = mr.value();
  return nccl_abi::kSuccess;
}

nccl_abi::Result NetComm::dereg_mr(void* mhandle) {
  std::lock_guard lock(mu_);
  auto r = conn_->deregister_memory(static_cast<StripedMemory*>(mhandle));
  if (!r) return fail(r.error(), "deregMr");
  return nccl_abi::kSuccess;
}

NetRequest* NetComm::free_slot() {
  auto it = std::find_if(slots_.begin(), slots_.end(), [](const NetRequest& s) { return !s.in_use; });
  if (it == slots_.end()) {
    // Only LL/LL128 receives reported early can free a slot that NCCL no longer tests: progress
    // to find their completions.
    poll();
    it = std::find_if(slots_.begin(), slots_.end(), [](const NetRequest& s) { return !s.in_use; });
  }
  return it == slots_.end() ? nullptr : &*it;
}

nccl_abi::Result NetComm::isend(void* data, std::size_t size, int tag, void* mhandle, void** request) {
  std::lock_guard lock(mu_);
  last_call_ = std::chrono::steady_clock::now();
  *request = nullptr;
  if (broken_) return nccl_abi::kRemoteError;
  NetRequest* slot = free_slot();
  if (slot == nullptr) return nccl_abi::kSuccess;  // HA_NCCL_MAX_REQUESTS outstanding: NCCL retries
  auto id = conn_->isend(data, size, static_cast<std::uint64_t>(static_cast<std::uint32_t>(tag)),
                         static_cast<StripedMemory*>(mhandle));
  if (!id) return fail(id.error(), "isend");
  *slot = NetRequest{.comm = this, .id = id.value(), .count = 1, .posted = {size}, .in_use = true};
  ++messages_;
  *request = slot;
  // Checked here as well as in poll(): test() polls only while a request is unfinished, and a
  // send that the connection completed inside its own test() (loaded machine, fast peer) never
  // reaches poll(); CI once sent all 96 messages of a faulted run that way with no cut.
  inject_fault_if_due();
  return nccl_abi::kSuccess;
}

void NetComm::inject_fault_if_due() {
  if (!fault_) return;
  const auto elapsed = std::chrono::steady_clock::now() - ready_at_;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count();
  if (!fault_->due(messages_, static_cast<std::uint64_t>(ms), [this] { return conn_->standbys_ready(); })) return;
  plugin_log().info("send comm #{}: fault injected: cutting the primary rail after {} messages, {} ms (every standby ready)",
                    serial_, messages_, ms);
  conn_->cut_primary();
}

nccl_abi::Result NetComm::irecv(int n, void** data, const std::size_t* sizes, const int* tags, void** mhandles,
                                void** request) {
  std::lock_guard lock(mu_);
  last_call_ = std::chrono::steady_clock::now();
  const bool optional = *request == reinterpret_cast<void*>(nccl_abi::kOptionalRecvCompletion);
  *request = nullptr;
  if (broken_) return nccl_abi::kRemoteError;
  if (n < 1 || static_cast<std::uint32_t>(n) > max_recvs_) {
    plugin_log().warn("recv comm #{}: irecv of {} buffers; maxRecvs is {}", serial_, n, max_recvs_);
    return nccl_abi::kInvalidArgument;
  }
  NetRequest* slot = free_slot();
  if (slot == nullptr) return nccl_abi::kSuccess;
  const auto count = static_cast<std::size_t>(n);
  std::vector<std::uint64_t> wide_tags(count);
  std::vector<StripedMemory*> mrs(count);
  for (std::size_t i = 0; i < count; ++i) {
    wide_tags[i] = static_cast<std::uint32_t>(tags[i]);
    mrs[i] = static_cast<StripedMemory*>(mhandles[i]);
  }
  auto id =
      conn_->irecv(std::span<void* const>(data, count), std::span<const std::size_t>(sizes, count), wide_tags, mrs);
  if (!id) return fail(id.error(), "irecv");
  // NCCL sets the hint only for a single buffer (src/transport/net.cc); honour it only then.
  *slot = NetRequest{.comm = this,
                     .id = id.value(),
                     .count = n,
                     .posted = {sizes, sizes + count},
                     .in_use = true,
                     .optional_completion = early_recv_completion_ && optional && n == 1};
  *request = slot;
  return nccl_abi::kSuccess;
}

nccl_abi::Result NetComm::test(NetRequest& request, int* done, int* sizes) {
  std::lock_guard lock(mu_);
  last_call_ = std::chrono::steady_clock::now();
  *done = 0;
  if (!request.in_use || request.reported) {
    plugin_log().warn("{} comm #{}: test on a request that is not outstanding", side_name(side_), serial_);
    return nccl_abi::kInvalidUsage;
  }
  // At most one progress call per test: none for a request an earlier one already completed
  // (NCCL tests its requests one by one, and a progress call, a CQ read on every busy rail, per
  // test made the plugin's message rate a fraction of the bare connection's), one otherwise. A
  // lookup through FabricConnection::test progressed too: three per test of an unfinished
  // request, each an epoll_wait on tcp (issue 42, docs/nccl-plugin.md).
  auto result = request.optional_completion ? std::nullopt : conn_->finished(request.id);
  if (!result) poll();
  if (request.optional_completion) {
    // LL/LL128: NCCL learns from the flags in the data when it has landed; the slot stays taken
    // until the connection completes the receive (reap_early_completions).
    request.reported = true;
    *done = 1;
    if (sizes != nullptr) sizes[0] = as_int(request.posted[0]);
    return nccl_abi::kSuccess;
  }
  if (!result) result = conn_->finished(request.id);
  if (!result) return broken_ ? nccl_abi::kRemoteError : nccl_abi::kSuccess;
  request.in_use = false;
  if (!result->ok) {
    broken_ = true;
    plugin_log().warn("{} comm #{}: request failed: {}", side_name(side_), serial_, result->error);
    return nccl_abi::kRemoteError;
  }
  *done = 1;
  if (sizes != nullptr)
    for (int i = 0; i < request.count; ++i) sizes[i] = as_int(result->sizes.at(static_cast<std::size_t>(i)));
  return nccl_abi::kSuccess;
}

bool NetComm::progress_if_idle(std::chrono::steady_clock::time_point now, std::chrono::nanoseconds idle) {
  std::unique_lock lock(mu_, std::try_to_lock);
  if (!lock.owns_lock() || now - last_call_ < idle || broken_) return false;
  // Only a comm owing a staged send its ack (or its replay): everything else waits for NCCL's
  // next call, as it did before staging. Progressing idle comms at teardown, while NCCL closes
  // their peers in the same process, crashed shm in fi_cq_read (2 of 3 plugin-shm runs, 2xH200,
  // issue 42; issue 33 met the same provider bug).
  // And a receive comm holding LL/LL128 receives reported done early: NCCL no longer tests them
  // and may make no call on the comm until the GPU has seen the data, while the sender's engine
  // may need this side's engine to act (re-post its control receives, answer a ping or a failover
  // handshake): without this poll the sender failed over for nothing and then got no answer on the
  // standby ("no answer from the peer on path 1 within 200 ms"), no rail left (the LL harness case
  // over net, 3 runs in 5; 8 in 8 with it).
  // And a receive comm holding deliveries not yet acknowledged (acks go out lazily,
  // delivery_ack_clock.hpp): its sender's staged copies and soft RTO wait for that ack.
  if (conn_->unacknowledged_sends() == 0 && !has_early_completions() && !conn_->owes_delivery_ack()) return false;
  poll();
  return true;
}

bool NetComm::has_early_completions() const {
  return std::any_of(slots_.begin(), slots_.end(), [](const NetRequest& s) { return s.in_use && s.reported; });
}

void NetComm::poll() {
  conn_->progress();
  inject_fault_if_due();
  if (conn_->failovers() != failovers_seen_) {
    const ConnectionStats st = conn_->stats();
    failovers_seen_ = st.failovers;
    // With several streams each fails over on its own and the count is their sum; the rail named
    // is stream 0's (a tail stream's failover leaves it where it was).
    const std::uint32_t streams = conn_->layout().streams;
    plugin_log().info("{} comm #{}: failover {} done: now on rail {}{}, {} WRs replayed so far", side_name(side_),
                      serial_, st.failovers, st.active_rail,
                      streams > 1 ? fmt::format(" (stream 0; failovers summed over {} streams)", streams) : "",
                      st.replayed);
  }
  if (!refusal_logged_ && conn_->control_refused() > 0) {
    // Once per comm: a flood of forgeries must not become a flood of log lines.
    refusal_logged_ = true;
    plugin_log().warn("{} comm #{}: refused a control message ({}); dropped, the connection goes on (later "
                      "refusals are counted, not logged)",
                      side_name(side_), serial_, conn_->stats().first_control_refusal);
  }
  if (conn_->failed() && !broken_) {
    broken_ = true;
    plugin_log().warn("{} comm #{}: connection failed: no usable rail left", side_name(side_), serial_);
  }
  reap_early_completions();
}

void NetComm::reap_early_completions() {
  for (auto& s : slots_) {
    if (!s.in_use || !s.reported) continue;
    auto result = conn_->finished(s.id);
    if (!result) continue;
    s.in_use = false;
    if (!result->ok) {
      broken_ = true;
      plugin_log().warn("recv comm #{}: a receive completed early for LL/LL128 failed later: {}", serial_,
                        result->error);
    }
  }
}

}  // namespace railcheck::nccl
