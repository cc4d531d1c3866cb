// NCCL COLL logs imported by `railcheck replay-sched` (engine/plan/nccl_log_import.hpp); the
// input is also split in two at its first form feed, as two per-rank files.
#include "engine/plan/nccl_log_import.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace railcheck::plan;
  const std::string text(railcheck::fuzz::as_text(data, size));
  (void)import_nccl_logs({LogFile{"fuzz.log", text}});
  if (const auto cut = text.find('\f'); cut != std::string::npos)
    (void)import_nccl_logs({LogFile{"rank0.log", text.substr(0, cut)}, LogFile{"rank1.log", text.substr(cut + 1)}});
  return 0;
}
