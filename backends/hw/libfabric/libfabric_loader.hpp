#pragma once
// libfabric is loaded on first use, not linked (libfabric_loader.cpp says why). Code that starts
// talking to libfabric asks here first, so a machine without the library gets one line naming
// the cause instead of a failed fi_allocinfo.
#include <optional>
#include <string>

namespace railcheck::fabric {

// Loads libfabric.so.1 if not done yet. nullopt when it is loaded and every function the
// backend calls was found; otherwise why not (dlopen's message, or the missing symbol version).
std::optional<std::string> libfabric_unavailable();

}  // namespace railcheck::fabric
