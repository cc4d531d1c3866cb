#include "backends/hw/nccl/plugin_log.hpp"

#include <cstdio>

namespace railcheck::nccl {

void PluginLog::emit(nccl_abi::LogLevel level, const std::string& line) const {
  const nccl_abi::Logger logger = logger_.load(std::memory_order_acquire);
  if (logger != nullptr) {
    // The message goes through "%s": a '%' in it (a provider name, a path) is never a format.
    logger(level, nccl_abi::kSubsysNet | nccl_abi::kSubsysInit, __FILE__, __LINE__, "NET/railcheck %s", line.c_str());
    return;
  }
  if (level == nccl_abi::kLogWarn) std::fprintf(stderr, "NET/railcheck WARN %s\n", line.c_str());
}

PluginLog& plugin_log() {
  static PluginLog log;
  return log;
}

}  // namespace railcheck::nccl
