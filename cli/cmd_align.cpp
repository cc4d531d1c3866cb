// railcheck align: the NCCL 2.28 scheduling model (engine/plan/nccl228_*) held against recorded
// NCCL runs op by op (engine/plan/alignment.hpp). This file finds the recordings on disk and
// prints the table; the comparison itself is pure.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "engine/plan/alignment.hpp"
#include "engine/plan/nccl228_algo_proto_env.hpp"
#include "models/toml_reader.hpp"

namespace railcheck::cli {
namespace {

namespace fs = std::filesystem;

bool is_trace(const fs::path& p) {
  const auto n = p.filename().string();
  return n.starts_with("railcheck-prof-") && p.extension() == ".jsonl";
}

struct Workload {
  std::string name;
  std::vector<fs::path> traces;
  std::vector<fs::path> logs;
  std::optional<fs::path> env_txt;  // the recording's environment (scripts/gpu/nccl_sched_groundtruth.sh)
};

// The traces and logs directly in `dir` (no recursion).
Workload workload_in(const fs::path& dir, std::vector<fs::path>* subdirs) {
  Workload w{dir.filename().string(), {}, {}, {}};
  if (w.name.empty() || w.name == ".") w.name = fs::absolute(dir).parent_path().filename().string();
  std::error_code ec;
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(it->path());
  std::sort(entries.begin(), entries.end());
  for (const auto& e : entries) {
    if (is_trace(e))
      w.traces.push_back(e);
    else if (e.extension() == ".log")
      w.logs.push_back(e);
    else if (e.filename() == "env.txt")
      w.env_txt = e;
    else if (subdirs && fs::is_directory(e, ec))
      subdirs->push_back(e);
  }
  return w;
}

// A folder with traces is one workload; a folder of such folders (one level down) is many; files
// make one.
Result<std::vector<Workload>> find_workloads(const std::vector<std::string>& inputs) {
  std::vector<Workload> out;
  Workload files{"files", {}, {}, {}};
  for (const auto& in : inputs) {
    const fs::path p(in);
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
      (p.extension() == ".log" ? files.logs : files.traces).push_back(p);
      continue;
    }
    if (!fs::is_directory(p, ec)) return Error{fmt::format("{}: no such file or folder", in), ""};
    std::vector<fs::path> subdirs;
    Workload here = workload_in(p, &subdirs);
    if (!here.traces.empty()) {
      out.push_back(std::move(here));
      continue;
    }
    const auto before = out.size();
    for (const auto& d : subdirs) {
      Workload sub = workload_in(d, nullptr);
      if (!sub.traces.empty()) out.push_back(std::move(sub));
    }
    if (out.size() == before)
      return Error{fmt::format("{}: no railcheck-prof-*.jsonl here or one folder down", in),
                   "record with scripts/gpu/nccl_sched_groundtruth.sh"};
  }
  if (!files.traces.empty())
    out.push_back(std::move(files));
  else if (!files.logs.empty())
    return Error{"logs given without profiler traces", "add the railcheck-prof-*.jsonl files"};
  return out;
}

Result<std::vector<plan::NamedText>> read_all(const std::vector<fs::path>& paths) {
  std::vector<plan::NamedText> out;
  for (const auto& p : paths) {
    auto text = read_text_file(p.string(), "recording", "a profiler trace or an NCCL log");
    if (!text) return text.error();
    out.push_back({p.string(), std::move(text).value()});
  }
  return out;
}

// NCCL_ALGO / NCCL_PROTO for one workload: the option, else its logs' ENV lines, else its env.txt.
Result<plan::AppliedSettings> algo_proto_env(const Workload& w, const plan::AlgoProtoSettings& option,
                                             const std::vector<plan::NamedText>& logs, plan::CommShape& shape) {
  std::vector<plan::NamedLog> named;
  for (const auto& f : logs) named.push_back({f.name, f.text});
  std::optional<plan::NamedText> env;
  if (w.env_txt) {
    auto text = read_all({*w.env_txt});
    if (!text) return text.error();
    env = text->front();
  }
  return plan::apply_algo_proto_env(option, named,
                                    env ? std::optional<plan::NamedLog>({env->name, env->text}) : std::nullopt, shape);
}

std::string side(const plan::OpSide& s) {
  const std::string tuned = s.algo < 0 ? std::string()
                                       : fmt::format("{}/{}, {} warps, ", plan::algorithm_name(s.algo),
                                                     plan::protocol_name(s.proto), s.warps);
  return fmt::format("{}plan {} of its launch, position {}, channels {{{}}}", tuned, s.plan, s.position,
                     fmt::join(s.channels, ","));
}

std::vector<std::string> field_tallies(const plan::AlignmentReport& r) {
  std::vector<std::string> out;
  for (auto f : plan::kAlignFields)
    if (auto it = r.by_field.find(f); it != r.by_field.end())
      out.push_back(fmt::format("{} {}/{}", plan::name(f), it->second.matched, it->second.ops));
  return out;
}

std::string percent(const plan::Tally& t) {
  return t.ops == 0 ? "-" : fmt::format("{:.1f}%", 100.0 * t.matched / t.ops);
}

void print_table(const plan::AlignmentReport& r, const std::vector<std::string>& notes, std::uint32_t max_mismatches,
                 bool predict) {
  fmt::print(
      "NCCL 2.28 {} model against {} recorded run{} (ops of every rank; an op matches when {}its channel set, plan "
      "within its launch and place in the plan all agree)\n",
      predict ? "tuning and scheduling" : "scheduling", r.workloads.size(), r.workloads.size() == 1 ? "" : "s",
      predict ? "a collective's algorithm, protocol and warps as the model predicts them, " : "");
  fmt::print("{:<20} {:>6} {:>8} {:>7}  {}\n", "workload", "ops", "matched", "", "configuration");
  for (const auto& w : r.workloads) {
    const auto& t = r.by_workload.at(w);
    fmt::print("{:<20} {:>6} {:>8} {:>7}  {}\n", w, t.ops, t.matched, percent(t), r.config.at(w));
  }
  fmt::print("{:<20} {:>6} {:>8} {:>7}\n", "total", r.total.ops, r.total.matched, percent(r.total));
  std::vector<std::string> funcs;
  for (const auto& [f, t] : r.by_func) funcs.push_back(fmt::format("{} {}/{}", f, t.matched, t.ops));
  fmt::print("by operation: {}\n", fmt::join(funcs, ", "));
  fmt::print("by field: {}\n", fmt::join(field_tallies(r), ", "));
  for (const auto& n : notes) fmt::print("note: {}\n", n);
  for (std::size_t i = 0; i < r.mismatches.size() && i < max_mismatches; ++i) {
    const auto& m = r.mismatches[i];
    std::vector<std::string_view> fields;
    for (auto f : m.differing) fields.push_back(plan::name(f));
    fmt::print("{} mismatch: {} rank {} call #{} ({}), {} differ:\n  NCCL:  {}\n  model: {}\n  rule:  {}\n",
               i == 0 ? "first" : "next", m.workload, m.rank, m.call, m.what, fmt::join(fields, ", "), side(m.truth),
               side(m.model), m.rule);
  }
  if (r.mismatches.size() > max_mismatches)
    fmt::print("... {} more mismatches (--mismatches N to see them)\n", r.mismatches.size() - max_mismatches);
  if (r.mismatches.empty()) fmt::print("every operation aligned\n");
}

nlohmann::json to_json(const plan::AlignmentReport& r, const std::vector<std::string>& notes, bool predict) {
  auto tally = [](const plan::Tally& t) { return nlohmann::json{{"ops", t.ops}, {"matched", t.matched}}; };
  auto side_json = [](const plan::OpSide& s) {
    nlohmann::json j{{"plan", s.plan}, {"position", s.position}, {"channels", s.channels}};
    if (s.algo >= 0) {
      j["algorithm"] = plan::algorithm_name(s.algo);
      j["protocol"] = plan::protocol_name(s.proto);
      j["warps"] = s.warps;
    }
    return j;
  };
  nlohmann::json j;
  j["model"] = "nccl-2.28";
  j["mode"] = predict ? "predict" : "schedule";
  j["by_field"] = nlohmann::json::object();
  for (const auto& [f, t] : r.by_field) j["by_field"][std::string(plan::name(f))] = tally(t);
  j["total"] = tally(r.total);
  j["workloads"] = nlohmann::json::array();
  for (const auto& w : r.workloads) {
    auto t = tally(r.by_workload.at(w));
    t["name"] = w;
    t["configuration"] = r.config.at(w);
    j["workloads"].push_back(t);
  }
  j["by_operation"] = nlohmann::json::object();
  for (const auto& [f, t] : r.by_func) j["by_operation"][f] = tally(t);
  j["mismatches"] = nlohmann::json::array();
  for (const auto& m : r.mismatches) {
    j["mismatches"].push_back({{"workload", m.workload},
                               {"rank", m.rank},
                               {"call", m.call},
                               {"op", m.what},
                               {"differing",
                                [&] {
                                  std::vector<std::string> out;
                                  for (auto f : m.differing) out.emplace_back(plan::name(f));
                                  return out;
                                }()},
                               {"nccl", side_json(m.truth)},
                               {"model", side_json(m.model)},
                               {"rule", m.rule}});
  }
  j["notes"] = notes;
  return j;
}

}  // namespace

int cmd_align(const AlignOptions& o) {
  auto fail = [](const Error& e) {
    fmt::print(stderr, "railcheck align: {}\n", e.message());
    return kExitBadInput;
  };
  plan::AlgoProtoSettings option;
  if (o.nccl_env) {
    auto given = plan::settings_from_option(*o.nccl_env, "--nccl-env");
    if (!given) return fail(given.error());
    option = std::move(given).value();
  }
  auto workloads = find_workloads(o.inputs);
  if (!workloads) return fail(workloads.error());
  plan::AlignmentReport report;
  std::vector<std::string> notes;
  for (const auto& w : workloads.value()) {
    auto traces = read_all(w.traces);
    if (!traces) return fail(traces.error());
    auto logs = read_all(w.logs);
    if (!logs) return fail(logs.error());
    auto run = plan::load_recorded_run(w.name, traces.value(), logs.value());
    if (!run) return fail(run.error());
    auto env = algo_proto_env(w, option, logs.value(), run->shape);
    if (!env) return fail(env.error());
    if (workloads->size() == 1) {
      notes = run->notes;
      notes.insert(notes.end(), env->notes.begin(), env->notes.end());
    }
    for (const auto& c : env->conflicts) notes.push_back(fmt::format("{}: {}", w.name, c));
    auto ok = plan::align_run(run.value(), report, o.predict);
    if (!ok) return fail(ok.error());
  }
  if (o.json)
    fmt::print("{}\n", to_json(report, notes, o.predict).dump(2));
  else
    print_table(report, notes, o.max_mismatches, o.predict);
  return report.mismatches.empty() ? kExitOk : kExitViolation;
}

}  // namespace railcheck::cli
