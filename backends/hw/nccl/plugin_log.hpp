#pragma once
// Logging through the logger NCCL hands to init(), so the plugin's lines land in NCCL's own
// NCCL_DEBUG output ("NET/railcheck ..."), interleaved with NCCL's. Before init (or when NCCL
// passes no logger) warnings go to stderr and the rest is dropped, as NCCL itself would at its
// default NCCL_DEBUG level.
#include <fmt/format.h>

#include <atomic>
#include <string>

#include "backends/hw/nccl/net_abi.hpp"

namespace railcheck::nccl {

class PluginLog {
 public:
  void attach(nccl_abi::Logger logger) { logger_.store(logger, std::memory_order_release); }

  template <typename... Args>
  void info(fmt::format_string<Args...> f, Args&&... args) const {
    emit(nccl_abi::kLogInfo, fmt::format(f, std::forward<Args>(args)...));
  }
  template <typename... Args>
  void warn(fmt::format_string<Args...> f, Args&&... args) const {
    emit(nccl_abi::kLogWarn, fmt::format(f, std::forward<Args>(args)...));
  }

 private:
  void emit(nccl_abi::LogLevel level, const std::string& line) const;
  std::atomic<nccl_abi::Logger> logger_{nullptr};
};

// The one log of the loaded plugin (the ABI is process-global: one logger per process).
PluginLog& plugin_log();

}  // namespace railcheck::nccl
