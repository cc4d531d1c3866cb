// Model files of `railcheck check` (verify/check_spec.hpp), each read by the loader of the world
// it names, as `railcheck check` dispatches (cli/cmd_check_worlds.cpp).
#include "fuzz/fuzz_input.hpp"
#include "verify/bootstrap_auth/auth_model.hpp"
#include "verify/check_spec.hpp"
#include "verify/imm/imm_world.hpp"
#include "verify/plan/plan_models.hpp"
#include "verify/zerobuf/zerobuf_check.hpp"

namespace {

template <typename R>
void consume(const R& r) {
  if (!r) (void)r.error().message();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace railcheck;
  const auto text = fuzz::as_text(data, size);
  const auto world = verify::model_world(text);
  if (world == "plan-channels") {
    consume(plan::load_channel_model(text, "fuzz.toml"));
  } else if (world == "plan-lifecycle") {
    consume(plan::load_lifecycle_model(text, "fuzz.toml"));
  } else if (world == "imm") {
    consume(imm::load_imm_model(text, "fuzz.toml"));
  } else if (world == "bootstrap-auth") {
    consume(bootstrap::load_auth_model(text, "fuzz.toml"));
  } else if (verify::zerobuf::names_zerobuf_world(text)) {
    consume(verify::zerobuf::load_zerobuf_spec_string(text, "fuzz.toml"));
  } else {
    consume(verify::load_check_spec_string(text, "fuzz.toml"));
  }
  return 0;
}
