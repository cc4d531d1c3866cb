// railcheck triage: one verdict for a hang from the ranks' Flight Recorder dumps (triage/).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>

#include "cli/commands.hpp"
#include "models/toml_reader.hpp"
#include "triage/fr_calls.hpp"
#include "triage/triage_verdict.hpp"

namespace railcheck::cli {
namespace {

namespace fs = std::filesystem;

struct Inputs {
  std::vector<std::string> dumps;
  std::vector<std::string> logs;
};

// A folder holds the watchdog's dumps, <prefix><rank> (rank_0, rank_1.json), and beside them
// the ranks' NCCL logs (*.log). The prefix is --prefix, else the one ending in "rank_" (as the
// watchdog's default, /tmp/nccl_trace_rank_, names them), else the one most files share; other
// files are passed over.
Result<std::vector<std::string>> dumps_in(const fs::path& dir, const std::optional<std::string>& prefix) {
  static const std::regex dump_name(R"((.*?[^0-9])([0-9]+)(\.(json|pkl|pickle))?)");
  std::map<std::string, std::vector<std::string>> by_prefix;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::smatch m;
    const auto name = e.path().filename().string();
    if (e.is_regular_file() && e.path().extension() != ".log" && std::regex_match(name, m, dump_name))
      by_prefix[m[1].str()].push_back(e.path().string());
  }
  if (prefix) {
    auto it = by_prefix.find(*prefix);
    if (it == by_prefix.end()) return Error{fmt::format("{}: no file named {}<rank>", dir.string(), *prefix), ""};
    return it->second;
  }
  if (by_prefix.empty())
    return Error{fmt::format("{}: no dump in it (the watchdog names them <prefix><rank>, e.g. rank_0)", dir.string()),
                 "set TORCH_FR_DUMP_TEMP_FILE=<folder>/rank_ in the job (docs/triage.md)"};
  std::size_t most = 0;
  for (const auto& [p, files] : by_prefix) most = std::max(most, files.size());
  std::vector<std::string> best;
  for (const auto& [p, files] : by_prefix)
    if (files.size() == most) best.push_back(p);
  std::vector<std::string> watchdog_named;  // TORCH_FR_DUMP_TEMP_FILE's default ends in "rank_"
  for (const auto& [p, files] : by_prefix)
    if (p.size() >= 5 && p.compare(p.size() - 5, 5, "rank_") == 0) watchdog_named.push_back(p);
  if (watchdog_named.size() == 1) return by_prefix.at(watchdog_named.front());
  if (best.size() == 1) return by_prefix.at(best.front());
  return Error{
      fmt::format("{}: files of several prefixes could be the dumps ({})", dir.string(), fmt::join(best, ", ")),
      "name the dumps' prefix with --prefix"};
}

Result<Inputs> collect(const TriageOptions& o) {
  Inputs in{{}, o.nccl_logs};
  for (const auto& p : o.inputs) {
    if (!fs::is_directory(p)) {
      in.dumps.push_back(p);
      continue;
    }
    auto dumps = dumps_in(p, o.prefix);
    if (!dumps) return dumps.error();
    std::vector<std::string> logs;
    for (const auto& e : fs::directory_iterator(p))
      if (e.is_regular_file() && e.path().extension() == ".log") logs.push_back(e.path().string());
    std::sort(dumps->begin(), dumps->end());
    std::sort(logs.begin(), logs.end());
    in.dumps.insert(in.dumps.end(), dumps->begin(), dumps->end());
    if (o.nccl_logs.empty()) in.logs.insert(in.logs.end(), logs.begin(), logs.end());
  }
  return in;
}

Result<bool> one_dump_per_rank(const std::vector<triage::FrDump>& dumps) {
  for (std::size_t i = 0; i < dumps.size(); ++i)
    for (std::size_t j = i + 1; j < dumps.size(); ++j)
      if (dumps[i].rank == dumps[j].rank)
        return Error{fmt::format("{} and {} are both rank {}", dumps[i].source, dumps[j].source, dumps[i].rank),
                     "give one dump per rank"};
  return true;
}

}  // namespace

int cmd_triage(const TriageOptions& o) {
  auto fail = [](const Error& e) {
    fmt::print(stderr, "railcheck triage: {}\n", e.message());
    return kExitBadInput;
  };
  auto in = collect(o);
  if (!in) return fail(in.error());
  auto dumps = triage::read_fr_dumps(in->dumps);
  if (!dumps) return fail(dumps.error());
  if (auto ok = one_dump_per_rank(dumps.value()); !ok) return fail(ok.error());
  std::vector<plan::LogFile> logs;
  for (const auto& p : in->logs) {
    auto text = read_text_file(p, "NCCL log", "the ranks' NCCL_DEBUG=INFO output");
    if (!text) return fail(text.error());
    logs.push_back(plan::LogFile{p, std::move(text).value()});
  }
  const auto verdict = triage::triage(dumps.value(), logs);
  fmt::print("{}", triage::render(verdict));
  return verdict.kind == triage::Verdict::Kind::NoProblem ? 0 : 1;
}

}  // namespace railcheck::cli
