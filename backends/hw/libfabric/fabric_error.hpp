#pragma once
// Every libfabric call is checked; a failure becomes an Error that names the call, the
// provider and fi_strerror's text (as fabtests' FT_PRINTERR does).
#include <string_view>

#include "engine/core/result.hpp"

namespace railcheck::fabric {

// rc is the negative fi_errno the call returned (e.g. -FI_ENODATA).
Error call_error(std::string_view call, std::string_view provider, long rc, std::string_view hint = {});

}  // namespace railcheck::fabric
