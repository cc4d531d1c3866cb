#include "backends/hw/nccl/provider_facts.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>

#include "backends/hw/libfabric/libfabric_loader.hpp"
#include "backends/hw/libfabric/provider_query.hpp"

namespace railcheck::nccl {
namespace {

std::optional<std::string> resolved(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) return std::nullopt;
  return std::string(buf);
}

// The interface holding `address` (IPv4 dotted quad), e.g. "lo" for 127.0.0.1.
std::string interface_of(const std::string& address) {
  in_addr want{};
  if (address.empty() || ::inet_pton(AF_INET, address.c_str(), &want) != 1) return {};
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return {};
  std::string found;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    const auto* sin = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
    if (sin->sin_addr.s_addr == want.s_addr) {
      found = i->ifa_name;
      break;
    }
  }
  ::freeifaddrs(list);
  return found;
}

struct InfoDeleter {
  void operator()(fi_info* i) const { fi_freeinfo(i); }
};
using InfoPtr = std::unique_ptr<fi_info, InfoDeleter>;

}  // namespace

std::optional<std::uint64_t> sysfs_link_mbps(const std::string& sys_root, const std::string& interface) {
  if (interface.empty()) return std::nullopt;
  std::ifstream in(fmt::format("{}/class/net/{}/speed", sys_root, interface));
  long long mbps = 0;
  // Reading "speed" fails (EINVAL) for interfaces without a link speed, such as lo; a down or
  // virtual link reports -1.
  if (!(in >> mbps) || mbps <= 0) return std::nullopt;
  return static_cast<std::uint64_t>(mbps);
}

std::optional<std::string> sysfs_pci_path(const std::string& sys_root, const std::string& interface) {
  if (interface.empty()) return std::nullopt;
  auto path = resolved(fmt::format("{}/class/net/{}/device", sys_root, interface));
  // Only a PCI function is a NIC NCCL can place in its topology; virtio and friends also
  // resolve under /devices/pci..., anything else (virtual, usb) does not count.
  if (!path || path->find("/pci") == std::string::npos) return std::nullopt;
  return path;
}

Result<ProviderFacts> query_provider(const std::string& provider, const std::string& rail_address) {
  if (auto why = fabric::libfabric_unavailable())
    return Error{fmt::format("provider '{}' not available here: {}", provider, *why),
                 "install libfabric1 or put libfabric.so.1 on the plugin's LD_LIBRARY_PATH"};
  InfoPtr hints(fi_allocinfo());
  if (!hints) return Error{"fi_allocinfo failed", "out of memory"};
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG;
  hints->fabric_attr->prov_name = ::strdup(provider.c_str());
  fi_info* raw = nullptr;
  const int rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints.get(), &raw);
  InfoPtr info(raw);
  if (rc != 0 || !info)
    return Error{fmt::format("libfabric provider '{}' not available here: fi_getinfo returned {} ({})", provider, rc,
                             fi_strerror(-rc)),
                 "set HA_NCCL_PROVIDER to one that `fi_info -l` lists (efa, tcp;ofi_rxm, shm)"};

  ProviderFacts f;
  f.provider = provider;
  f.domain = info->domain_attr->name != nullptr ? info->domain_attr->name : "";
  f.interface = interface_of(rail_address);
  f.moves_data_unpolled =
      info->domain_attr->data_progress == FI_PROGRESS_AUTO && !fabric::runs_over_tcp_sockets(provider);
  // tcp and net name their domain after the interface they found; shm and efa name theirs otherwise.
  if (f.interface.empty() && fabric::runs_over_tcp_sockets(provider)) f.interface = f.domain;

  if (info->nic != nullptr) {
    const fid_nic& nic = *info->nic;
    if (nic.link_attr != nullptr && nic.link_attr->speed > 0) f.link_mbps = nic.link_attr->speed / 1'000'000;
    if (nic.bus_attr != nullptr && nic.bus_attr->bus_type == FI_BUS_PCI) {
      const fi_pci_attr& p = nic.bus_attr->attr.pci;
      f.pci_path = resolved(fmt::format("/sys/bus/pci/devices/{:04x}:{:02x}:{:02x}.{:x}", p.domain_id, p.bus_id,
                                        p.device_id, p.function_id));
    }
  }
  if (f.link_mbps == 0) f.link_mbps = sysfs_link_mbps("/sys", f.interface).value_or(0);
  if (!f.pci_path) f.pci_path = sysfs_pci_path("/sys", f.interface);

  // Budget caps in the provider's own terms: an endpoint is one QP's worth, a transmit queue's
  // depth bounds the outstanding WRs. libfabric has no device-wide CQ depth (the size is chosen
  // at fi_cq_open), so CQ entries do not bound anything here; the count of CQs does.
  f.caps.max_qp = info->domain_attr->ep_cnt;
  f.caps.max_qp_wr = info->tx_attr != nullptr ? info->tx_attr->size : 0;
  f.caps.max_cq = info->domain_attr->cq_cnt;
  f.caps.max_cqe = std::numeric_limits<std::uint32_t>::max();
  f.caps.source = fmt::format("provider {} domain {} (fi_getinfo: ep_cnt {}, tx size {}, cq_cnt {})", provider,
                              f.domain, f.caps.max_qp, f.caps.max_qp_wr, f.caps.max_cq);
  return f;
}

}  // namespace railcheck::nccl
