// Counterexample traces read by `railcheck replay`: the failover world's
// (verify/counterexample.hpp) and the other worlds' step traces (verify/step_trace.hpp).
#include "fuzz/fuzz_input.hpp"
#include "verify/counterexample.hpp"
#include "verify/step_trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = railcheck::fuzz::as_text(data, size);
  (void)railcheck::verify::read_trace_json(text, "fuzz.json");
  (void)railcheck::verify::trace_world(text);
  (void)railcheck::verify::read_step_trace(text, "fuzz.json");
  return 0;
}
