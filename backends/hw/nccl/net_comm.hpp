#pragma once
// One NCCL send or receive comm: a StripedConnection (one side of an HA connection over the rail
// group's rails, on one or more streams) plus what the ext-net contract adds on top of it:
//   * a fixed pool of request slots, so at most HA_NCCL_MAX_REQUESTS are outstanding; when the
//     pool is full isend/irecv return a NULL request, which NCCL takes as "try again later";
//   * NCCL_NET_OPTIONAL_RECV_COMPLETION: for a single-buffer LL/LL128 receive NCCL reads
//     completion from flags inside the data, so test() may report it done at once. The receive
//     is still posted (the next message must land in this buffer, in order), and its slot stays
//     taken until the connection really completes it. Only where the provider moves data with no
//     call from us (ProviderFacts::moves_data_unpolled, or HA_NCCL_OPTIONAL_RECV_COMPLETION=honour):
//     NCCL's proxy posts receives ahead and tests each once, so on tcp;ofi_rxm, shm and net a
//     message arriving after that test waited for the background thread (1.1-1.2 ms per message
//     on net, bench/nccl_plugin_overhead --landing; all_reduce 16 B-16 KiB took 1.2-2.2 ms on
//     2xH200) or, with no thread, never landed. There the hint is declined: the receive completes
//     normally and NCCL keeps testing it;
//   * the fault injector (fault_plan.hpp) on send comms;
//   * failover reporting: every failover the connection makes is logged through NCCL's logger;
//   * progress while NCCL does not call: progress_if_idle, from the plugin's background thread.
// NCCL drives one comm from one proxy thread, but its GDR probe and connection setup may touch
// comms from another; a mutex per comm makes that safe at no cost when uncontended.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "backends/hw/nccl/fault_plan.hpp"
#include "backends/hw/nccl/net_abi.hpp"
#include "backends/hw/nccl/striped_connection.hpp"

namespace railcheck::nccl {

class NetComm;

// What NCCL holds as a request pointer.
struct NetRequest {
  NetComm* comm = nullptr;
  RequestId id{};
  int count = 0;                     // buffers in the grouped receive (1 for a send)
  std::vector<std::size_t> posted;   // the posted sizes, reported for an early completion
  bool in_use = false;               // the connection still owns the slot
  bool reported = false;             // test() already told NCCL it is done
  bool optional_completion = false;  // NCCL_NET_OPTIONAL_RECV_COMPLETION honoured for this receive
};

enum class CommSide : std::uint8_t { Send, Recv };

class NetComm {
 public:
  NetComm(CommSide side, std::uint64_t serial, std::unique_ptr<StripedConnection> conn, std::uint32_t max_requests,
          std::uint32_t max_recvs, bool early_recv_completion, std::optional<FaultPlan> fault);
  ~NetComm();
  NetComm(const NetComm&) = delete;
  NetComm& operator=(const NetComm&) = delete;

  nccl_abi::Result reg_mr(void* data, std::size_t size, int type, void** mhandle);
  nccl_abi::Result dereg_mr(void* mhandle);
  nccl_abi::Result isend(void* data, std::size_t size, int tag, void* mhandle, void** request);
  // `request` in: kOptionalRecvCompletion or anything else; out: the request or NULL.
  nccl_abi::Result irecv(int n, void** data, const std::size_t* sizes, const int* tags, void** mhandles,
                         void** request);
  nccl_abi::Result test(NetRequest& request, int* done, int* sizes);

  // The background thread's call (background_progress.hpp): one poll() if NCCL has not called
  // this comm for `idle`, nobody holds it now, and it has staged sends not yet acknowledged or
  // receives reported done early (LL/LL128) that the connection has not completed. True when it
  // progressed.
  bool progress_if_idle(std::chrono::steady_clock::time_point now, std::chrono::nanoseconds idle);

  CommSide side() const { return side_; }
  std::uint64_t serial() const { return serial_; }

 private:
  NetRequest* free_slot();
  void poll();  // progress, fault clock, failover log, reap early-completed slots
  void reap_early_completions();
  bool has_early_completions() const;  // a receive reported done early and not yet completed
  void inject_fault_if_due();  // the fault clock: cut the primary rail once the plan says so
  nccl_abi::Result fail(const Error& e, const char* call);

  CommSide side_;
  std::uint64_t serial_;
  std::unique_ptr<StripedConnection> conn_;
  std::uint32_t max_recvs_;
  bool early_recv_completion_;  // the provider moves data without our progress calls
  std::vector<NetRequest> slots_;
  std::optional<FaultClock> fault_;
  std::chrono::steady_clock::time_point ready_at_;
  std::chrono::steady_clock::time_point last_call_;  // NCCL's last isend/irecv/test (under mu_)
  std::uint64_t messages_ = 0;
  std::uint32_t failovers_seen_ = 0;
  bool refusal_logged_ = false;
  bool broken_ = false;
  std::mutex mu_;
};

}  // namespace railcheck::nccl
