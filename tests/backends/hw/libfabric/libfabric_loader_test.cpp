// The loaded library answers through the forwarding definitions as the linked one did; rxm sized as the
// plugin sizes it (provider_query.hpp).
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdlib>
#include <string>

#include "backends/hw/libfabric/fid_handle.hpp"
#include "backends/hw/libfabric/libfabric_loader.hpp"
#include "backends/hw/libfabric/provider_query.hpp"

using namespace railcheck::fabric;

TEST_CASE("libfabric loads on first use and its functions are libfabric's own", "[libfabric]") {
  const auto why = libfabric_unavailable();
  INFO(why.value_or(""));
  REQUIRE_FALSE(why.has_value());
  CHECK(fi_version() >= FI_VERSION(1, 17));
  // libfabric's own text, not the loader's: the call reached the library.
  CHECK(std::string(fi_strerror(FI_ENODATA)) == "No data available");
  InfoHandle hints(fi_allocinfo());  // fi_dupinfo(NULL) under the inline
  REQUIRE(hints != nullptr);
  REQUIRE(hints->ep_attr != nullptr);
  InfoHandle copy(fi_dupinfo(hints.get()));
  CHECK(copy != nullptr);
  const auto providers = available_providers();
  CHECK(std::find(providers.begin(), providers.end(), "shm") != providers.end());
}

TEST_CASE("rxm is sized as the NCCL plugin sizes it unless the environment says otherwise", "[libfabric]") {
  ::unsetenv("FI_OFI_RXM_MSG_RX_SIZE");
  CHECK(size_rxm_like_the_plugin("shm").empty());
  CHECK(std::getenv("FI_OFI_RXM_MSG_RX_SIZE") == nullptr);  // not rxm: nothing set
  const std::string set = size_rxm_like_the_plugin("tcp;ofi_rxm");
  REQUIRE(std::getenv("FI_OFI_RXM_MSG_RX_SIZE") != nullptr);
  CHECK(std::string(std::getenv("FI_OFI_RXM_MSG_RX_SIZE")) == std::to_string(kRxmMsgRxSize));
  CHECK(set.find("posts " + std::to_string(kRxmMsgRxSize) + " receive buffers") != std::string::npos);
  ::setenv("FI_OFI_RXM_MSG_RX_SIZE", "96", 1);
  const std::string user = size_rxm_like_the_plugin("tcp;ofi_rxm");
  CHECK(std::string(std::getenv("FI_OFI_RXM_MSG_RX_SIZE")) == "96");
  CHECK(user.find("posts 96 receive buffers") != std::string::npos);
  CHECK(user.find("from the environment") != std::string::npos);
  ::unsetenv("FI_OFI_RXM_MSG_RX_SIZE");
}
