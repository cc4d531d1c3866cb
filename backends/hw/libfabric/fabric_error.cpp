#include "backends/hw/libfabric/fabric_error.hpp"

#include <fmt/format.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

namespace railcheck::fabric {

Error call_error(std::string_view call, std::string_view provider, long rc, std::string_view hint) {
  const int code = static_cast<int>(rc < 0 ? -rc : rc);
  return Error{fmt::format("{} failed on provider '{}': {} ({})", call, provider, fi_strerror(code), rc),
               std::string(hint)};
}

}  // namespace railcheck::fabric
