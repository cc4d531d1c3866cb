#pragma once
// The plugin's process-wide state and the connection half of the ext-net contract, shared by
// the v8 and v11 entry tables (abi_v8.cpp, abi_v11.cpp):
//   init        once per process: read HA_NCCL_* and RAILCHECK_NCCL_FAULT, ask the provider for
//               its facts, compute every device's properties, log them; later calls (v11 calls
//               init once per NCCL communicator) reuse the first result, or its error.
//   listen      a receiving StripedConnection right away (HA_NCCL_STREAMS streams, each a
//               FabricConnection); its handle (128 B) goes to NCCL.
//   connect     never blocks (seed §3.2): the first call starts a sending StripedConnection, and
//               every call progresses it and hands the comm to NCCL only when it is ready.
//               NCCL calls again with the same handle buffer until it gets a comm, so pending
//               connects are keyed by that buffer and its bytes (a reused buffer holding a new
//               handle starts a new connect).
//   accept      the same for the listening side.
// Every comm handed to NCCL is also progressed by the background thread while NCCL does not call
// it (background_progress.hpp), from make_comm until close_comm.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/hw/libfabric/fabric_connection.hpp"
#include "backends/hw/nccl/background_progress.hpp"
#include "backends/hw/nccl/device_properties.hpp"
#include "backends/hw/nccl/fault_plan.hpp"
#include "backends/hw/nccl/net_abi.hpp"
#include "backends/hw/nccl/net_comm.hpp"
#include "backends/hw/nccl/plugin_config.hpp"
#include "backends/hw/nccl/striped_connection.hpp"
#include "engine/auth/job_key.hpp"

namespace railcheck::nccl {

// What NCCL holds as a listenComm: the receiving connection until accept hands it out.
struct ListenComm {
  std::uint32_t group = 0;
  std::unique_ptr<StripedConnection> conn;
  bool refusal_logged = false;  // a control message failed its MAC during the handshake
};

class NetPlugin {
 public:
  static NetPlugin& instance();

  nccl_abi::Result init(nccl_abi::Logger logger);
  nccl_abi::Result devices(int* ndev) const;
  // NULL when `dev` does not exist (after logging why).
  const DeviceProperties* properties(int dev) const;

  nccl_abi::Result listen(int dev, void* handle, void** listen_comm);
  nccl_abi::Result connect(int dev, void* handle, void** send_comm);
  nccl_abi::Result accept(void* listen_comm, void** recv_comm);
  nccl_abi::Result close_listen(void* listen_comm);
  nccl_abi::Result close_comm(void* comm, CommSide side);

  // Largest message NCCL may hand one isend/irecv (maxP2pBytes / maxCollBytes); v8 sizes are int.
  static constexpr std::size_t kMaxMessageBytesV11 = nccl_abi::kMaxNetSizeBytes;
  static constexpr std::size_t kMaxMessageBytesV8 = std::size_t{1} << 30;  // NCCL's MAX_NET_SIZE for v8

 private:
  struct PendingConnect {
    std::vector<std::uint8_t> handle;  // the bytes NCCL passed, to tell a reused buffer apart
    std::uint32_t group = 0;
    std::unique_ptr<StripedConnection> conn;
  };

  FabricOptions options_for(std::uint32_t group) const;
  StripeLayout stripe_layout() const { return {config_.streams, config_.stripe_bytes}; }
  NetComm* make_comm(CommSide side, std::uint32_t group, std::unique_ptr<StripedConnection> conn);

  std::mutex mu_;
  bool initialized_ = false;
  std::optional<Error> init_error_;
  PluginConfig config_;
  // The job key every connection's control messages are sealed with (issue 46); unset only
  // with RAILCHECK_JOB_AUTH=off, which init logs as a warning.
  std::optional<auth::JobKey> key_;
  std::optional<FaultPlan> fault_;
  bool early_recv_completion_ = false;  // NCCL_NET_OPTIONAL_RECV_COMPLETION honoured
  std::string rxm_eager_;       // the provider variables in force (rxm_sizes' note), for the log
  std::string provider_why_;    // how HA_NCCL_PROVIDER resolved (resolve_provider), for the log
  std::uint32_t staged_bytes_ = 0;  // HA_NCCL_STAGE_BYTES as it applies (rxm_sizes)
  std::vector<DeviceProperties> devices_;
  std::map<void*, PendingConnect> pending_;
  std::uint64_t next_serial_ = 0;
  std::uint32_t faulted_comms_ = 0;
  // Progress for comms NCCL stopped calling (HA_NCCL_PROGRESS_US; null when 0). Last member: its
  // thread is joined before anything else goes.
  std::unique_ptr<BackgroundProgress> background_;
};

}  // namespace railcheck::nccl
