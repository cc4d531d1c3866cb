// Scheduling scenarios (scenarios/sched/*.toml, models/sched_scenario.hpp).
#include "models/sched_scenario.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)railcheck::plan::load_sched_scenario(railcheck::fuzz::as_text(data, size), "fuzz.toml");
  return 0;
}
