// Counterexample traces read by `railcheck replay` (verify/counterexample.hpp).
#include "fuzz/fuzz_input.hpp"
#include "verify/counterexample.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)railcheck::verify::read_trace_json(railcheck::fuzz::as_text(data, size), "fuzz.json");
  return 0;
}
