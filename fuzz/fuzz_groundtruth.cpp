// Ground-truth recordings (engine/plan/groundtruth.hpp): the profiler plugin's JSON lines and
// NCCL's TUNING lines, both read from files a GPU run left behind. The first byte picks which.
#include "engine/plan/groundtruth.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto text = railcheck::fuzz::as_text(data + 1, size - 1);
  if (data[0] & 1)
    (void)railcheck::plan::parse_tuning_lines(text, "fuzz.log");
  else
    (void)railcheck::plan::parse_truth_trace(text, "fuzz.jsonl");
  return 0;
}
