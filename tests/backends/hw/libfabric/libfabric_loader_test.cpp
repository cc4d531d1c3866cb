// The loaded library answers through the forwarding definitions as the linked one did.
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <catch2/catch.hpp>
#include <algorithm>
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
