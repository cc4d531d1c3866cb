#include "backends/hw/nccl/net_plugin.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "backends/hw/auth/job_key_source.hpp"
#include "backends/hw/nccl/plugin_log.hpp"

namespace railcheck::nccl {

namespace {

// A provider reads its variables when libfabric starts (our first fi_getinfo), so they are set
// before that (rxm_sizes in plugin_config.hpp says which and why), for both candidates while the
// provider is still auto. A process that started libfabric before NCCL loaded us keeps the sizes
// it started with.
void set_provider_variables(const std::vector<std::pair<std::string, std::string>>& vars) {
  for (const auto& [var, value] : vars) ::setenv(var.c_str(), value.c_str(), 0);
}

}  // namespace

NetPlugin& NetPlugin::instance() {
  static NetPlugin plugin;
  return plugin;
}

nccl_abi::Result NetPlugin::init(nccl_abi::Logger logger) {
  if (logger != nullptr) plugin_log().attach(logger);
  std::lock_guard lock(mu_);
  if (!initialized_) {
    initialized_ = true;
    auto run = [&]() -> Result<bool> {
      auto cfg = read_plugin_config([](const char* n) { return std::getenv(n); }, ha_variable_names());
      if (!cfg) return cfg.error();
      config_ = std::move(cfg).value();
      // The same key the launcher gives the bootstrap (docs/security.md): read once, never logged.
      auto key = hw::job_key_from_environment();
      if (!key) return key.error();
      key_ = std::move(key.value().key);
      if (key.value().off) {
        plugin_log().warn("{}: control messages between ranks are NOT authenticated: any process that can reach a "
                          "rail can inject, alter or replay them (docs/security.md)",
                          key.value().source);
      } else {
        plugin_log().info("control messages authenticated (HMAC-SHA-256) with the job key from {}",
                          key.value().source);
      }
      const char* fault_text = std::getenv(std::string(kFaultVariable).c_str());
      auto fault = parse_fault_plan(fault_text != nullptr ? fault_text : "");
      if (!fault) return fault.error();
      fault_ = fault.value();
      const auto ours = provider_variables(config_, [](const char* n) { return std::getenv(n); });
      set_provider_variables(ours);
      // getenv now sees the plugin's own values too; the log must still say whose each one is.
      const EnvLookup environment = [&ours](const char* n) -> const char* {
        for (const auto& [var, value] : ours)
          if (var == n) return nullptr;
        return std::getenv(n);
      };
      const auto addresses = rail_addresses_of(config_, 0);
      const std::string address = addresses.empty() ? std::string{} : addresses[0];
      const ProviderChoice choice = resolve_provider(
          config_.provider, [&address](const std::string& p) { return query_provider(p, address).ok(); });
      config_.provider = choice.provider;
      provider_why_ = choice.why;
      const RxmSizes sizes = rxm_sizes(config_, environment);
      staged_bytes_ = sizes.staged_bytes;
      rxm_eager_ = sizes.note.empty() ? std::string{} : sizes.note + " (in force if libfabric starts after this)";
      auto facts = query_provider(config_.provider, address);
      if (!facts) return facts.error();
      const std::string& hint = config_.optional_recv_completion;
      early_recv_completion_ = hint == "honour" || (hint == "auto" && facts.value().moves_data_unpolled);
      if (config_.progress_us > 0)
        background_ = std::make_unique<BackgroundProgress>(std::chrono::microseconds(config_.progress_us));
      for (std::uint32_t g = 0; g < config_.rail_groups; ++g) {
        auto p = device_properties(config_, facts.value(), static_cast<int>(g));
        if (!p) return p.error();
        devices_.push_back(std::move(p).value());
      }
      return true;
    };
    auto ok = run();
    if (!ok) {
      init_error_ = ok.error();
    } else {
      plugin_log().info("provider {} ({}), {} rail groups of {} rails, replay policy {}, soft RTO {}",
                        config_.provider, provider_why_,
                        config_.rail_groups, config_.rails_per_group, to_string(config_.engine.replay),
                        format_duration(config_.engine.initial_soft_rto()));
      for (const auto& d : devices_) plugin_log().info("{}", describe(d));
      for (const auto& a : advisories(config_.engine)) plugin_log().warn("{}", a);
      plugin_log().info("NCCL_NET_OPTIONAL_RECV_COMPLETION: {}",
                        early_recv_completion_
                            ? (config_.optional_recv_completion == "honour"
                                   ? "honoured (HA_NCCL_OPTIONAL_RECV_COMPLETION=honour)"
                                   : "honoured (the provider moves data with no call from the plugin)")
                            : (config_.optional_recv_completion == "decline"
                                   ? "declined (HA_NCCL_OPTIONAL_RECV_COMPLETION=decline): receives complete normally"
                                   : "declined: the provider moves data only inside the plugin's calls, so receives "
                                     "complete normally"));
      plugin_log().info("staged sends: {}; background progress: {}",
                        background_ && staged_bytes_ > 0
                            ? fmt::format("up to {} B complete once sent (copies kept for replay until acked, on "
                                          "providers with delivery acks)",
                                          staged_bytes_)
                            : std::string("off (every send waits for its delivery ack)"),
                        background_ ? fmt::format("every {} us for comms NCCL is not calling", config_.progress_us)
                                    : std::string("off"));
      plugin_log().info("streams per comm: {}", config_.streams == 1
                                                    ? std::string("1")
                                                    : fmt::format("{} (messages above {} B cut across them)",
                                                                  config_.streams, config_.stripe_bytes));
      if (!rxm_eager_.empty()) plugin_log().info("{}", rxm_eager_);
      if (fault_) plugin_log().info("{} set: {}", kFaultVariable, describe(*fault_));
    }
  }
  if (init_error_) {
    // NCCL then falls back to its internal transports (or fails if NCCL_NET asked for us).
    plugin_log().warn("init failed: {}", init_error_->message());
    return nccl_abi::kSystemError;
  }
  return nccl_abi::kSuccess;
}

nccl_abi::Result NetPlugin::devices(int* ndev) const {
  *ndev = static_cast<int>(devices_.size());
  return nccl_abi::kSuccess;
}

const DeviceProperties* NetPlugin::properties(int dev) const {
  if (dev < 0 || static_cast<std::size_t>(dev) >= devices_.size()) {
    plugin_log().warn("network device {} does not exist; devices() reports {}", dev, devices_.size());
    return nullptr;
  }
  return &devices_[static_cast<std::size_t>(dev)];
}

FabricOptions NetPlugin::options_for(std::uint32_t group) const {
  FabricOptions o;
  o.provider = config_.provider;
  o.rails = config_.rails_per_group;
  o.rail_addresses = rail_addresses_of(config_, group);
  o.tunables = config_.engine;
  o.key = key_;
  // Staging needs the background thread: a staged send NCCL was told is done may still need a
  // replay after NCCL's last call (background_progress.hpp).
  if (background_) {
    o.staged_send_bytes = staged_bytes_;
    o.staged_send_slots = config_.max_requests;
  }
  return o;
}

NetComm* NetPlugin::make_comm(CommSide side, std::uint32_t group, std::unique_ptr<StripedConnection> conn) {
  std::optional<FaultPlan> fault;
  if (side == CommSide::Send && fault_ && (fault_->comms == 0 || faulted_comms_ < fault_->comms)) {
    fault = fault_;
    ++faulted_comms_;
  }
  auto* comm = new NetComm(side, next_serial_++, std::move(conn), config_.max_requests,
                           static_cast<std::uint32_t>(devices_.at(group).max_recvs), early_recv_completion_, fault);
  plugin_log().info("{} comm #{} ready on {}", side == CommSide::Send ? "send" : "recv", comm->serial(),
                    devices_.at(group).name);
  if (background_) background_->add(comm);
  return comm;
}

nccl_abi::Result NetPlugin::listen(int dev, void* handle, void** listen_comm) {
  std::lock_guard lock(mu_);
  *listen_comm = nullptr;
  if (properties(dev) == nullptr) return nccl_abi::kInvalidArgument;
  const auto group = static_cast<std::uint32_t>(dev);
  std::vector<std::uint8_t> bytes;
  auto conn = StripedConnection::listen(options_for(group), stripe_layout(), bytes);
  if (!conn) {
    plugin_log().warn("listen on {} failed: {}", devices_[group].name, conn.error().message());
    return nccl_abi::kSystemError;
  }
  if (bytes.size() > nccl_abi::kHandleMaxSize) {
    plugin_log().warn("listen: handle of {} bytes exceeds NCCL_NET_HANDLE_MAXSIZE {}", bytes.size(),
                      nccl_abi::kHandleMaxSize);
    return nccl_abi::kInternalError;
  }
  std::memset(handle, 0, nccl_abi::kHandleMaxSize);
  std::memcpy(handle, bytes.data(), bytes.size());
  *listen_comm = new ListenComm{group, std::move(conn).value()};
  return nccl_abi::kSuccess;
}

nccl_abi::Result NetPlugin::connect(int dev, void* handle, void** send_comm) {
  std::lock_guard lock(mu_);
  *send_comm = nullptr;
  if (properties(dev) == nullptr) return nccl_abi::kInvalidArgument;
  const auto* raw = static_cast<const std::uint8_t*>(handle);
  std::vector<std::uint8_t> bytes(raw, raw + nccl_abi::kHandleMaxSize);
  auto it = pending_.find(handle);
  if (it != pending_.end() && it->second.handle != bytes) {
    plugin_log().warn("connect: the handle buffer now holds another handle; dropping the unfinished connect");
    pending_.erase(it);
    it = pending_.end();
  }
  if (it == pending_.end()) {
    const auto group = static_cast<std::uint32_t>(dev);
    auto conn = StripedConnection::connect(options_for(group), bytes);
    if (!conn) {
      plugin_log().warn("connect on {} failed: {}", devices_[group].name, conn.error().message());
      return nccl_abi::kSystemError;
    }
    it = pending_.emplace(handle, PendingConnect{bytes, group, std::move(conn).value()}).first;
  }
  PendingConnect& p = it->second;
  p.conn->progress();
  if (p.conn->failed()) {
    plugin_log().warn("connect on {} failed: the peer never answered on the primary rail (a peer with another job "
                      "key refuses every message: compare RAILCHECK_JOB_KEY_FILE on both ranks)",
                      devices_[p.group].name);
    pending_.erase(it);
    return nccl_abi::kRemoteError;
  }
  if (!p.conn->ready()) return nccl_abi::kSuccess;  // NULL comm: NCCL calls again
  *send_comm = make_comm(CommSide::Send, p.group, std::move(p.conn));
  pending_.erase(it);
  return nccl_abi::kSuccess;
}

nccl_abi::Result NetPlugin::accept(void* listen_comm, void** recv_comm) {
  std::lock_guard lock(mu_);
  *recv_comm = nullptr;
  auto* l = static_cast<ListenComm*>(listen_comm);
  if (l == nullptr || !l->conn) {
    plugin_log().warn("accept on a listen comm that already accepted");
    return nccl_abi::kInvalidUsage;
  }
  l->conn->progress();
  if (!l->refusal_logged && l->conn->control_refused() > 0) {
    // Before a comm exists: a forger (or a peer with another key) is refused here.
    l->refusal_logged = true;
    plugin_log().warn("listen comm on {}: refused a control message ({}); dropped, still accepting",
                      devices_[l->group].name, l->conn->stats().first_control_refusal);
  }
  if (l->conn->failed()) {
    plugin_log().warn("accept on {} failed: the connection broke during the handshake", devices_[l->group].name);
    return nccl_abi::kRemoteError;
  }
  if (!l->conn->ready()) return nccl_abi::kSuccess;
  *recv_comm = make_comm(CommSide::Recv, l->group, std::move(l->conn));
  return nccl_abi::kSuccess;
}

nccl_abi::Result NetPlugin::close_listen(void* listen_comm) {
  delete static_cast<ListenComm*>(listen_comm);
  return nccl_abi::kSuccess;
}

nccl_abi::Result NetPlugin::close_comm(void* comm, CommSide side) {
  auto* c = static_cast<NetComm*>(comm);
  if (c == nullptr) return nccl_abi::kSuccess;
  if (c->side() != side) {
    plugin_log().warn("close{} on a {} comm", side == CommSide::Send ? "Send" : "Recv",
                      c->side() == CommSide::Send ? "send" : "recv");
    return nccl_abi::kInvalidUsage;
  }
  if (background_) background_->remove(c);
  delete c;
  return nccl_abi::kSuccess;
}

}  // namespace railcheck::nccl
