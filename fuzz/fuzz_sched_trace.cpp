// Scheduling traces (JSON lines) of `railcheck replay-sched` (engine/plan/sched_trace.hpp).
#include "engine/plan/sched_trace.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)railcheck::plan::parse_sched_trace(railcheck::fuzz::as_text(data, size), "fuzz.jsonl");
  return 0;
}
