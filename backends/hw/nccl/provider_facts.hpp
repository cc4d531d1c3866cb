#pragma once
// What the machine says about a libfabric provider, for getProperties: where the NIC sits on
// PCI, its link speed, and the limits the maxComms budget divides. Read once at init from
// fi_getinfo (domain and endpoint attributes; the fid_nic where the provider fills it, as efa
// does) and from sysfs (/sys/class/net/<if>/speed and /device, as NCCL's own Socket transport
// does). Nothing here is guessed: a fact the machine does not give stays empty and
// device_properties() says which fallback it used.
#include <cstdint>
#include <optional>
#include <string>

#include "engine/budget/comm_budget.hpp"
#include "engine/core/result.hpp"

namespace railcheck::nccl {

struct ProviderFacts {
  std::string provider;                 // as asked, e.g. "tcp;ofi_rxm"
  std::string domain;                   // the first domain's name: "eth0", "lo", "shm", "rdmap16s27-rdm"
  std::string interface;                // the network interface the rails bind to; empty for shm
  std::optional<std::string> pci_path;  // resolved /sys/devices/... path of the NIC's PCI function
  std::uint64_t link_mbps = 0;          // 0 = not known
  // Data lands with no call from us: FI_PROGRESS_AUTO data progress from a provider that is not a
  // socket one. tcp and net say FI_PROGRESS_AUTO, but net 1.17 reads its sockets from a thread only
  // for CQs and EQs with wait objects (prov/net xnet_cq.c, xnet_eq.c), and the rails' CQs have
  // none (FI_WAIT_NONE): there a message that arrives after the last call waits for the next one.
  bool moves_data_unpolled = false;
  budget::BudgetCaps caps;              // ep_cnt -> max_qp, tx size -> max_qp_wr, cq_cnt -> max_cq
};

// `rail_address` (may be empty) picks the interface for sysfs lookups: the one holding that
// IPv4 address. Errors: the provider is not available here (with fi_getinfo's reason).
Result<ProviderFacts> query_provider(const std::string& provider, const std::string& rail_address);

// sysfs helpers, exposed for tests with a captured tree: `sys_root` is "/sys" on a live machine.
std::optional<std::uint64_t> sysfs_link_mbps(const std::string& sys_root, const std::string& interface);
std::optional<std::string> sysfs_pci_path(const std::string& sys_root, const std::string& interface);

}  // namespace railcheck::nccl
