// Each rank modelled from its own inputs (rank_inputs.hpp).
#include "engine/plan/rank_inputs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/plan/logged_choices.hpp"
#include "engine/plan/nccl_init_tuning.hpp"

namespace railcheck::plan {
namespace {

// The knobs a rank has set, as "NCCL_PROTO=LL (rank1.log:31)".
std::string settings_text(const RankEnv& env) {
  std::vector<std::string> parts;
  for (const auto& [var, s] : env.values) parts.push_back(fmt::format("{}={} (from {})", var, s.value, s.origin));
  return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, ", "));
}

// A rank whose tuner settings differ from the rank that printed the TUNING table decides from
// tables of its own: computed from the topology with its settings, as NCCL computes them.
void drop_printed_tables(CommShape& s) {
  s.v228.costs.reset();
  s.v228.max_threads = Nccl228Params{}.max_threads;
  s.v228.max_threads_logged = false;
}

Result<std::vector<std::string>> finish(const std::vector<bool>& has_log, SchedInput& input) {
  std::vector<std::string> notes;
  const auto n = input.rank_env.size();
  // Say who runs with what, once, when ranks differ: the first thing a reader of a hang wants.
  bool differ = false;
  for (std::size_t r = 1; r < n; ++r)
    differ = differ || input.rank_env[r].values.size() != input.rank_env[0].values.size() ||
             !std::equal(
                 input.rank_env[r].values.begin(), input.rank_env[r].values.end(), input.rank_env[0].values.begin(),
                 [](const auto& a, const auto& b) { return a.first == b.first && a.second.value == b.second.value; });
  if (differ)
    for (std::size_t r = 0; r < n; ++r)
      notes.push_back(fmt::format("rank {} runs with {}", r, settings_text(input.rank_env[r])));
  else if (n != 0 && !input.rank_env[0].values.empty())
    notes.push_back(fmt::format("every rank runs with {}", settings_text(input.rank_env[0])));
  std::vector<std::uint32_t> blind;
  for (std::size_t r = 0; r < n; ++r)
    if (has_log[r] && !input.rank_env[r].log_has_env_lines) blind.push_back(static_cast<std::uint32_t>(r));
  if (!blind.empty())
    notes.push_back(fmt::format(
        "{} no ENV lines (NCCL_DEBUG_SUBSYS without ENV, or nothing set): modelled with NCCL's defaults for every "
        "setting the model reads ({} of them) except those --nccl-env or env.txt give; a setting of a rank's own "
        "would go unseen (add ENV to NCCL_DEBUG_SUBSYS)",
        blind.size() == 1 ? fmt::format("rank {} has", blind.front())
                          : fmt::format("ranks {} have", fmt::join(blind, ", ")),
        kPlanKnobs.size()));
  const auto shared = share_logged_choices(input.ranks, [&](std::uint32_t from, std::uint32_t to) {
    return from < n && to < n && same_tuner_inputs(input.rank_env[from], input.rank_env[to]) &&
           input.rank_shapes[from].coll_channels == input.rank_shapes[to].coll_channels;
  });
  if (shared != 0)
    notes.push_back(fmt::format(
        "{} collectives of ranks without TUNING lines take the logged rank's algorithm, protocol and channels "
        "(NCCL decides them alike on ranks with the same tuner inputs; it prints them on rank 0 only)",
        shared));
  return notes;
}

// A setting given for a rank the input does not have is a typo, never silently dropped.
Result<bool> ranks_exist(const RankEnvSources& given, std::uint32_t n) {
  for (const GivenEnv* g : {&given.option, &given.env_txt})
    for (const auto& [rank, env] : g->by_rank)
      if (rank >= n && !env.values.empty())
        return Error{fmt::format("{} gives settings for rank {}; the input has {} rank{}",
                                 env.values.begin()->second.origin, rank, n, n == 1 ? "" : "s"),
                     "ranks count from 0"};
  return true;
}

}  // namespace

Result<std::vector<std::string>> model_each_rank(const std::vector<RankLogText>& logs, const RankEnvSources& given,
                                                 SchedInput& input) {
  const auto n = static_cast<std::uint32_t>(input.ranks.size());
  if (auto ok = ranks_exist(given, n); !ok) return ok.error();
  std::vector<InitTuning> init(n);
  std::vector<bool> has_log(n, false);
  input.rank_env.assign(n, RankEnv{});
  std::optional<std::uint32_t> printer;  // the rank whose log holds the TUNING table and thread rows
  for (std::uint32_t r = 0; r < n && r < logs.size(); ++r) {
    if (logs[r].text.empty()) continue;
    has_log[r] = true;
    auto parsed = parse_init_tuning(logs[r].text, logs[r].name);
    if (!parsed) return parsed.error();
    init[r] = std::move(parsed).value();
    if (!printer && (init[r].costs || init[r].max_threads)) printer = r;
    const RankEnv from_log = env_from_log(logs[r].text, logs[r].name);
    input.rank_env[r] = prefer(given.option.for_rank(r), prefer(from_log, given.env_txt.for_rank(r)));
  }
  for (std::uint32_t r = 0; r < n; ++r)
    if (!has_log[r]) input.rank_env[r] = prefer(given.option.for_rank(r), given.env_txt.for_rank(r));
  std::vector<std::string> notes;
  input.rank_shapes.assign(n, input.shape);
  for (std::uint32_t r = 0; r < n; ++r) {
    CommShape& s = input.rank_shapes[r];
    InitTuning own = init[r];
    own.costs.reset();  // the printed tables are the communicator's, already in input.shape
    own.max_threads.reset();
    apply_init_tuning(own, s);
    if (printer && r != *printer && !same_tuner_inputs(input.rank_env[r], input.rank_env[*printer])) {
      drop_printed_tables(s);
      notes.push_back(fmt::format(
          "rank {}'s tuner settings differ from rank {}'s, which printed the TUNING table: its algorithm, protocol, "
          "channels and threads are computed from the topology with its own settings",
          r, *printer));
    }
    const OwnInitFacts facts{own.coll_channels.has_value(), own.p2p_chunk_bytes.has_value(),
                             own.coll_channels.has_value(), s.v228.max_threads_logged};
    auto applied = apply_rank_env(input.rank_env[r], facts, s);
    if (!applied) return applied.error();
  }
  auto more = finish(has_log, input);
  if (!more) return more.error();
  notes.insert(notes.end(), more->begin(), more->end());
  return notes;
}

Result<std::vector<std::string>> model_each_rank(const RankEnvSources& given, SchedInput& input) {
  const auto n = static_cast<std::uint32_t>(input.ranks.size());
  if (auto ok = ranks_exist(given, n); !ok) return ok.error();
  input.rank_env.assign(n, RankEnv{});
  input.rank_shapes.assign(n, input.shape);
  for (std::uint32_t r = 0; r < n; ++r) {
    input.rank_env[r] = prefer(given.option.for_rank(r), given.env_txt.for_rank(r));
    auto applied = apply_rank_env(input.rank_env[r], OwnInitFacts{}, input.rank_shapes[r]);
    if (!applied) return applied.error();
  }
  return finish(std::vector<bool>(n, false), input);
}

}  // namespace railcheck::plan
