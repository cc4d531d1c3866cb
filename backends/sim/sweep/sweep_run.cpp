#include "backends/sim/sweep/sweep_run.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "backends/sim/sweep/child_pool.hpp"
#include "backends/sim/sweep/result_log.hpp"
#include "backends/sim/sweep/sweep_progress.hpp"
#include "models/scenario.hpp"

namespace railcheck::sweep {
namespace {

namespace fs = std::filesystem;

std::string last_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::string last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

nlohmann::json make_row(const SweepPoint& p, int exit_code, const fs::path& json_path, const fs::path& log_path) {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : p.params) params[k] = v;
  nlohmann::json row{
      {"index", p.index}, {"point", p.id}, {"params", params}, {"seed", p.seed}, {"exit_code", exit_code}};
  std::ifstream in(json_path);
  const auto summary = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
  // railcheck run exits 0 or 1 with a summary; anything else means it never finished a run.
  if ((exit_code == 0 || exit_code == 1) && summary.is_object()) {
    for (const auto& [k, v] : summary.items())
      if (k != "seed") row[k] = v;
  } else {
    row["outcome"] = kOutcomeError;
    row["error"] = last_line(log_path.string());
  }
  return row;
}

}  // namespace

Result<SweepTally> run_sweep(const SweepSpec& spec, const SweepConfig& cfg) {
  if (cfg.runner.empty()) return Error{"sweep: no runner command", {}};
  auto log = ResultLog::open(cfg.out_dir, cfg.resume);
  if (!log) return log.error();
  const fs::path points_dir = fs::path(cfg.out_dir) / "points";
  std::error_code ec;
  fs::create_directories(points_dir, ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", points_dir.string(), ec.message()), {}};

  SweepTally tally;
  std::vector<SweepPoint> todo;
  std::vector<ChildJob> jobs;
  for (SweepPoint& p : take_shard(expand(spec), cfg.shard)) {
    ++tally.points;
    if (log.value().finished().contains(p.id)) {
      ++tally.skipped;
      continue;
    }
    // Every point's scenario is checked before anything runs: a bad axis value fails the whole
    // sweep at once with the loader's message, not as a column of error rows.
    auto text = point_scenario(spec, p);
    if (!text) return text.error();
    const std::string name = fmt::format("p{:06}", p.index);
    const fs::path scenario = points_dir / (name + ".toml");
    if (std::ofstream f(scenario); !(f << text.value()) || !f.flush())
      return Error{fmt::format("cannot write {}", scenario.string()), "check that the output folder is writable"};
    // Named by the written file, so the loader's file:line points at a line one can open.
    if (auto sc = load_scenario_string(text.value(), scenario.string()); !sc)
      return Error{fmt::format("{}: point {} ({}): {}", spec.source_path, p.index, p.id, sc.error().what),
                   sc.error().hint};
    fs::remove(points_dir / (name + ".json"), ec);
    ChildJob job{cfg.runner, (points_dir / (name + ".log")).string()};
    job.argv.insert(job.argv.end(), {scenario.string(), "--seed", std::to_string(p.seed), "--json",
                                     (points_dir / (name + ".json")).string()});
    jobs.push_back(std::move(job));
    todo.push_back(std::move(p));
  }

  std::optional<ProgressReporter> progress;
  if (cfg.progress != nullptr) progress.emplace(cfg.progress, todo.size());
  auto ran = run_children(jobs, cfg.jobs, [&](std::size_t j, int code) {
    const fs::path stem = points_dir / fmt::format("p{:06}", todo[j].index);
    const nlohmann::json row = make_row(todo[j], code, stem.string() + ".json", stem.string() + ".log");
    log.value().append(row);
    ++tally.ran;
    if (row["outcome"] == kOutcomeError)
      ++tally.errors;
    else if (code == 1)
      ++tally.violations;
    if (progress) progress->point_done();
  });
  if (progress) progress->finish();
  if (!ran) return ran.error();
  return tally;
}

}  // namespace railcheck::sweep
