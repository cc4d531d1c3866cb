// railcheck validate: one scenario on the SimGrid driver and in the netns lab, side by side
// (backends/validate/validate_scenario.hpp does the work; this prints it). Exit 0 the drivers
// agree, 1 they disagree beyond the tolerance (or the lab failed), 2 bad input, 77 the scenario
// or this machine cannot run it in the lab (which one says why).
#include <fmt/format.h>

#include "backends/hw/verbs/verbs_probe.hpp"
#include "backends/validate/validate_scenario.hpp"
#include "cli/cli_output.hpp"
#include "cli/commands.hpp"
#include "models/scenario.hpp"

namespace railcheck::cli {
namespace {

constexpr int kExitSkipped = hw::verbs::kExitSkipped;  // 77, as conform

int stopped(validation::Validation::Status status, const std::string& why) {
  using Status = validation::Validation::Status;
  switch (status) {
    case Status::Skipped: fmt::print(stderr, "railcheck validate: {}; skipped\n", why); return kExitSkipped;
    case Status::BadInput: fmt::print(stderr, "railcheck validate: {}\n", why); return kExitBadInput;
    case Status::Failed:
    case Status::Compared: break;
  }
  fmt::print(stderr, "railcheck validate: {}\n", why);
  return kExitViolation;
}

}  // namespace

int cmd_validate(const ValidateOptions& o) {
  auto loaded = load_scenario_file(o.scenario);
  if (!loaded) {
    fmt::print(stderr, "railcheck validate: {}\n", loaded.error().message());
    return kExitBadInput;
  }
  const Scenario sc = std::move(loaded).value();
  if (o.lab_gbps && *o.lab_gbps > 0 && *o.lab_gbps < validation::kMinLabGbps)
    return bad_input("validate", fmt::format("--lab-gbps {}: shape the lab's rails to at least {} Gb/s, or 0 to leave "
                                             "them unshaped",
                                             *o.lab_gbps, validation::kMinLabGbps));
  validation::ValidateRequest request;
  request.provider = o.provider;
  request.runs = o.runs;
  if (o.lab_gbps) request.lab_gbps = *o.lab_gbps;
  request.seed = o.seed;
  request.progress = [](const std::string& line) { fmt::print(stderr, "railcheck validate: {}\n", line); };
  if (o.calibrate) {
    const validation::LinkKeys link = validation::calibrate_lab_link(sc, request);
    if (link.status != validation::Validation::Status::Compared) return stopped(link.status, link.why);
    fmt::print("{}", link.keys);
    if (!o.out_path.empty() && !write_text(o.out_path, link.keys))
      return bad_input("validate", fmt::format("cannot write {}", o.out_path));
    return kExitOk;
  }
  const validation::Validation v = validation::validate_scenario(sc, request);
  if (v.status != validation::Validation::Status::Compared) return stopped(v.status, v.why);
  fmt::print("{}", validation::to_text(v.answer));
  if (!o.json_path.empty() && !write_text(o.json_path, validation::to_json(v.answer).dump(2) + "\n"))
    return bad_input("validate", fmt::format("cannot write {}", o.json_path));
  return v.answer.agree() ? kExitOk : kExitViolation;
}

}  // namespace railcheck::cli
