// Model files of `railcheck check` (verify/check_spec.hpp).
#include "fuzz/fuzz_input.hpp"
#include "verify/check_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto spec = railcheck::verify::load_check_spec_string(railcheck::fuzz::as_text(data, size), "fuzz.toml");
  if (!spec) (void)spec.error().message();
  return 0;
}
