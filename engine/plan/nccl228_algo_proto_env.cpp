// NCCL_ALGO / NCCL_PROTO from the option, the logs' ENV lines or env.txt (nccl228_algo_proto_env.hpp).
#include "engine/plan/nccl228_algo_proto_env.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sstream>

#include "engine/plan/nccl228_cost_table.hpp"
#include "engine/plan/nccl228_enable_list.hpp"
#include "engine/plan/nccl_rank_env.hpp"
#include "engine/plan/nccl_types.hpp"

namespace railcheck::plan {
namespace {

constexpr std::string_view kAlgo = "NCCL_ALGO", kProto = "NCCL_PROTO";

std::vector<std::string> words(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::optional<EnvSetting>& slot(AlgoProtoSettings& s, std::string_view var) { return var == kAlgo ? s.algo : s.proto; }

// Per variable, `first`'s where it has one, else `second`'s.
AlgoProtoSettings prefer(const AlgoProtoSettings& first, const AlgoProtoSettings& second) {
  return {first.algo ? first.algo : second.algo, first.proto ? first.proto : second.proto};
}

}  // namespace

Result<AlgoProtoSettings> settings_from_option(std::string_view text, std::string_view origin) {
  AlgoProtoSettings out;
  for (const auto& w : words(text)) {
    const auto eq = w.find('=');
    const std::string var = w.substr(0, eq);
    if (eq == std::string::npos || (var != kAlgo && var != kProto))
      return Error{fmt::format("{} \"{}\": \"{}\" is not NCCL_ALGO=... or NCCL_PROTO=...", origin, text, w),
                   "e.g. --nccl-env 'NCCL_PROTO=LL NCCL_ALGO=Tree'; only these two variables are read"};
    auto& s = slot(out, var);
    if (s) return Error{fmt::format("{} \"{}\": {} given twice", origin, text, var), ""};
    s = EnvSetting{w.substr(eq + 1), std::string(origin)};
  }
  AlgoProtoEnable check;  // NCCL's grammar now, so a typo stops here and not mid-replay
  if (out.proto)
    if (auto ok = apply_nccl_proto(out.proto->value, check); !ok)
      return Error{fmt::format("{}: {}", origin, ok.error().what), ok.error().hint};
  if (out.algo)
    if (auto ok = apply_nccl_algo(out.algo->value, check); !ok)
      return Error{fmt::format("{}: {}", origin, ok.error().what), ok.error().hint};
  return out;
}

Result<AlgoProtoSettings> settings_from_logs(const std::vector<NamedLog>& logs) {
  AlgoProtoSettings out;
  for (const auto& log : logs) {
    // src/graph/tuning.cc ncclTopoTuneModel: INFO(NCCL_ENV, "NCCL_PROTO set by environment to %s", protoStr).
    const RankEnv env = env_from_log(log.text, log.name);
    for (std::string_view var : {kAlgo, kProto}) {
      const EnvSetting* found = env.find(var);
      if (found == nullptr) continue;
      auto& s = slot(out, var);
      if (!s)
        s = *found;
      else if (s->value != found->value)
        return Error{fmt::format("{} says {}={}, {} says {}", s->origin, var, s->value, found->origin, found->value),
                     fmt::format("the model has one communicator: choose with --nccl-env '{}=...'", var)};
    }
  }
  return out;
}

AlgoProtoSettings settings_from_env_txt(std::string_view text, std::string_view origin) {
  AlgoProtoSettings out;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("# env ")) continue;
    for (const auto& w : words(line))
      for (std::string_view var : {kAlgo, kProto})
        if (w.starts_with(fmt::format("{}=", var)))
          slot(out, var) = EnvSetting{w.substr(var.size() + 1), std::string(origin)};
  }
  return out;
}

Result<AppliedSettings> apply_algo_proto_settings(const AlgoProtoSettings& s, CommShape& shape) {
  AppliedSettings out;
  AlgoProtoEnable enable;
  // ncclTopoTuneModel reads NCCL_PROTO first, then NCCL_ALGO; each fills its own rows.
  for (const auto& [var, setting] : {std::pair{kProto, s.proto}, std::pair{kAlgo, s.algo}}) {
    if (!setting) continue;
    auto ok = var == kProto ? apply_nccl_proto(setting->value, enable) : apply_nccl_algo(setting->value, enable);
    if (!ok) return Error{fmt::format("{}: {}", setting->origin, ok.error().what), ok.error().hint};
    out.notes.push_back(fmt::format("{}={} (from {}; src/graph/tuning.cc ncclTopoTuneModel, parseList)", var,
                                    setting->value, setting->origin));
  }
  shape.v228.enable = enable;
  if (!shape.v228.costs || !shape.v228.costs->printed) return out;
  // The printed table is what NCCL used: a pair it shows with a bandwidth was not disabled.
  std::vector<std::string> on;
  for (int f = 0; f < kNumFunctions; ++f)
    for (int a = 0; a < kNumAlgorithms; ++a)
      for (int p = 0; p < kNumProtocols; ++p) {
        const auto uf = static_cast<std::size_t>(f), ua = static_cast<std::size_t>(a), up = static_cast<std::size_t>(p);
        if ((enable.algo[uf][ua] == 0 || enable.proto[uf][up] == 0) && shape.v228.costs->bandwidth[uf][ua][up] > 0)
          on.push_back(fmt::format("{} {}/{}", name(func_op(f)), algorithm_name(a), protocol_name(p)));
      }
  if (!on.empty())
    out.conflicts.push_back(fmt::format(
        "the TUNING table NCCL printed contradicts the NCCL_ALGO/NCCL_PROTO given: it shows {} pair{} with a "
        "bandwidth that the setting disables ({}); the table is what NCCL used and stays the tuner's input",
        on.size(), on.size() == 1 ? "" : "s", fmt::join(on, ", ")));
  return out;
}

Result<AppliedSettings> apply_algo_proto_env(const AlgoProtoSettings& option, const std::vector<NamedLog>& logs,
                                             const std::optional<NamedLog>& env_txt, CommShape& shape) {
  auto from_logs = settings_from_logs(logs);
  if (!from_logs) return from_logs.error();
  const AlgoProtoSettings from_env =
      env_txt ? settings_from_env_txt(env_txt->text, env_txt->name) : AlgoProtoSettings{};
  return apply_algo_proto_settings(prefer(option, prefer(from_logs.value(), from_env)), shape);
}

}  // namespace railcheck::plan
