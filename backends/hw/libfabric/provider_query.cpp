#include "backends/hw/libfabric/provider_query.hpp"

#include <fmt/format.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "backends/hw/libfabric/fabric_error.hpp"
#include "backends/hw/libfabric/libfabric_loader.hpp"

namespace railcheck::fabric {
namespace {

constexpr std::uint32_t kApiVersion = FI_VERSION(1, 17);
constexpr std::uint64_t kMrModes = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
constexpr std::size_t kMinCqData = 4;

InfoHandle base_hints() {
  InfoHandle hints(fi_allocinfo());
  if (!hints) return hints;
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG | FI_TAGGED | FI_RMA;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->domain_attr->mr_mode = static_cast<int>(kMrModes);
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  hints->tx_attr->msg_order = FI_ORDER_SAS;
  hints->rx_attr->msg_order = FI_ORDER_SAS;
  // A send completes only once the peer has placed it (fi_cq(3) FI_DELIVERY_COMPLETE), as an
  // RC send completes only on the responder's ACK. The engine's in-flight table forgets a
  // message at its send completion, so the default FI_TRANSMIT_COMPLETE (shm reports a send
  // done when it is copied into the peer's queue, before any receive matched it) would let a
  // failover lose messages the receiver had not taken yet.
  hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
  return hints;
}

}  // namespace

bool is_shm(const std::string& provider) { return provider == "shm"; }
bool runs_over_tcp_sockets(const std::string& provider) {
  for (const char* p : {"tcp", "net", "sockets"})
    if (provider.rfind(p, 0) == 0) return true;
  return false;
}
bool send_completion_is_local(const std::string& provider) {
  if (provider.find("ofi_rxm") != std::string::npos) return true;
  if (provider == "net") {
    const char* saved = std::getenv("FI_NET_MAX_SAVED");
    return saved == nullptr || std::string_view{saved} != "0";
  }
  return false;
}

bool backend_acks_by_default(const std::string& provider) {
  return send_completion_is_local(provider) || provider == "net";
}

bool local_send_completion_pays(const std::string& provider, bool delivery_acks) {
  return delivery_acks && provider == "net";
}

std::string size_rxm_like_the_plugin(const std::string& provider) {
  if (provider.find("ofi_rxm") == std::string::npos) return {};
  if (const char* user = std::getenv("FI_OFI_RXM_MSG_RX_SIZE"))
    return fmt::format("ofi_rxm posts {} receive buffers per connection (FI_OFI_RXM_MSG_RX_SIZE from the environment)",
                       user);
  setenv("FI_OFI_RXM_MSG_RX_SIZE", std::to_string(kRxmMsgRxSize).c_str(), 1);
  return fmt::format("ofi_rxm posts {} receive buffers per connection, as the NCCL plugin sets it "
                     "(FI_OFI_RXM_MSG_RX_SIZE; rxm's default is 128)",
                     kRxmMsgRxSize);
}

std::vector<std::string> available_providers() {
  std::vector<std::string> names;
  InfoHandle hints(fi_allocinfo());
  if (!hints) return names;
  hints->ep_attr->type = FI_EP_RDM;
  fi_info* raw = nullptr;
  if (fi_getinfo(kApiVersion, nullptr, nullptr, 0, hints.get(), &raw) != 0) return names;
  InfoHandle all(raw);
  for (const fi_info* i = all.get(); i != nullptr; i = i->next)
    if (i->fabric_attr != nullptr && i->fabric_attr->prov_name != nullptr)
      names.emplace_back(i->fabric_attr->prov_name);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

Result<InfoHandle> query_provider(const std::string& provider, const std::string& node) {
  if (auto why = libfabric_unavailable())
    return Error{fmt::format("provider '{}' not available here: {}", provider, *why),
                 "install libfabric1 (Debian/Ubuntu) or put libfabric.so.1 on LD_LIBRARY_PATH"};
  InfoHandle hints = base_hints();
  if (!hints) return Error{"fi_allocinfo returned no memory", ""};
  hints->fabric_attr->prov_name = strdup(provider.c_str());
  // tcp: ask for IPv4 so an address fits the handle's 16-byte gid field (endpoint_address.hpp).
  if (runs_over_tcp_sockets(provider)) hints->addr_format = FI_SOCKADDR_IN;
  fi_info* raw = nullptr;
  const char* n = node.empty() ? nullptr : node.c_str();
  const int rc = fi_getinfo(kApiVersion, n, nullptr, n != nullptr ? FI_SOURCE : 0, hints.get(), &raw);
  if (rc != 0) {
    std::string avail;
    for (const auto& name : available_providers()) avail += (avail.empty() ? "" : ", ") + name;
    return Error{fmt::format("provider '{}' not available here{}: fi_getinfo returned {} ({}); available: {}", provider,
                             node.empty() ? "" : fmt::format(" at '{}'", node),
                             rc == -FI_ENODATA ? "-FI_ENODATA" : std::to_string(rc), fi_strerror(-rc),
                             avail.empty() ? "none" : avail),
                 "pick one of the available providers, or check the bind address"};
  }
  InfoHandle info(raw);
  if (info->domain_attr->cq_data_size < kMinCqData)
    return Error{fmt::format("provider '{}' carries {} bytes of remote CQ data; the engine needs {} "
                             "(FI_REMOTE_CQ_DATA for the 32-bit immediate)",
                             provider, info->domain_attr->cq_data_size, kMinCqData),
                 ""};
  if ((info->domain_attr->mr_mode & FI_MR_ENDPOINT) != 0)
    return Error{
        fmt::format("provider '{}' needs FI_MR_ENDPOINT memory registration, which this backend does not do", provider),
        ""};
  // Keep only the first match; the rest of the list is other interfaces of the same provider.
  fi_freeinfo(info->next);
  info->next = nullptr;
  return info;
}

}  // namespace railcheck::fabric
