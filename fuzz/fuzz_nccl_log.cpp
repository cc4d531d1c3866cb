// NCCL COLL logs imported by `railcheck replay-sched` (engine/plan/nccl_log_import.hpp); the
// input is also split in two at its first form feed, as two per-rank files. What imports is
// replayed under NCCL 2.28's rules and judged (sched_verdict.hpp), as the CLI does; the text is
// also read as --nccl-env and env.txt settings (nccl_rank_env.hpp).
#include "engine/plan/nccl_log_import.hpp"
#include "engine/plan/nccl_rank_env.hpp"
#include "engine/plan/sched_replay.hpp"
#include "engine/plan/sched_verdict.hpp"
#include "fuzz/fuzz_input.hpp"

namespace {

using namespace railcheck::plan;

void import_replay_judge(const std::vector<LogFile>& files) {
  auto log = import_nccl_logs(files);
  if (!log || log->input.ranks.size() > 16) return;  // a bound on the fuzzer's time per input
  const auto policy = policy_by_name("nccl").value();
  auto r = replay(log->input, policy, NcclVersion::V2_28);
  if (r) (void)judge(log->input, r.value(), nullptr);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(railcheck::fuzz::as_text(data, size));
  import_replay_judge({LogFile{"fuzz.log", text}});
  if (const auto cut = text.find('\f'); cut != std::string::npos)
    import_replay_judge({LogFile{"rank0.log", text.substr(0, cut)}, LogFile{"rank1.log", text.substr(cut + 1)}});
  (void)env_from_option(text, "fuzz");
  (void)env_from_env_txt(text, "fuzz");
  return 0;
}
