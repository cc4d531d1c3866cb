#include "swarm/swarm_rank_report.hpp"

#include <fmt/format.h>

namespace railcheck::swarm {
namespace {

// Bumped whenever the layout changes: ranks of different builds must not misread each other.
constexpr std::uint64_t kReportVersion = 1;
// A finding's line is short; a corrupt length must not ask for gigabytes.
constexpr std::uint64_t kMaxText = std::uint64_t{1} << 20;

void put_text(std::vector<std::uint64_t>& out, const std::string& text) {
  out.push_back(text.size());
  for (std::size_t at = 0; at < text.size(); at += 8) {
    std::uint64_t word = 0;
    for (std::size_t b = 0; b < 8 && at + b < text.size(); ++b)
      word |= std::uint64_t{static_cast<unsigned char>(text[at + b])} << (8 * b);
    out.push_back(word);
  }
}

// Reads words front to back; every read says whether the words held it.
class WordReader {
 public:
  explicit WordReader(std::span<const std::uint64_t> words) : words_(words) {}

  bool word(std::uint64_t& v) {
    if (at_ >= words_.size()) return false;
    v = words_[at_++];
    return true;
  }
  bool text(std::string& s) {
    std::uint64_t len = 0;
    if (!word(len) || len > kMaxText || (len + 7) / 8 > words_.size() - at_) return false;
    s.resize(len);
    for (std::size_t i = 0; i < len; ++i) s[i] = static_cast<char>((words_[at_ + i / 8] >> (8 * (i % 8))) & 0xFF);
    at_ += (len + 7) / 8;
    return true;
  }
  bool done() const { return at_ == words_.size(); }

 private:
  std::span<const std::uint64_t> words_;
  std::size_t at_ = 0;
};

}  // namespace

std::vector<std::uint64_t> encode_report(const RankReport& r, std::uint64_t stride) {
  const SwarmTally& t = r.tally;
  std::vector<std::uint64_t> out = {kReportVersion, r.error ? 1U : 0U, r.jobs,          r.wall_us,
                                    t.runs,         t.findings,        t.failed_cleanly};
  out.insert(out.end(), t.enabled.begin(), t.enabled.end());
  out.insert(out.end(), t.drawn.begin(), t.drawn.end());
  out.insert(out.end(), t.phases.begin(), t.phases.end());
  out.insert(out.end(), t.triggers.begin(), t.triggers.end());
  out.push_back(t.largest);
  out.push_back(t.sim_ns);
  const std::vector<SeedRun> runs = seed_runs(t.seeds, std::max<std::uint64_t>(1, stride));
  out.push_back(runs.size());
  for (const SeedRun& run : runs) out.insert(out.end(), {run.first, run.count, run.step});
  out.push_back(t.finding_lines.size());
  for (const std::string& line : t.finding_lines) put_text(out, line);
  put_text(out, r.error.value_or(""));
  return out;
}

Result<RankReport> decode_report(std::span<const std::uint64_t> words) {
  WordReader in(words);
  auto bad = [&](std::string_view what) {
    return Error{fmt::format("a swarm rank report of {} words is cut short or corrupt at its {}", words.size(), what),
                 "every rank must run the same railcheck build"};
  };
  std::uint64_t version = 0, has_error = 0, largest = 0, runs = 0, lines = 0;
  if (!in.word(version)) return bad("version");
  if (version != kReportVersion)
    return Error{
        fmt::format("a swarm rank report has version {}, this railcheck reads version {}", version, kReportVersion),
        "every rank must run the same railcheck build"};
  RankReport r;
  SwarmTally& t = r.tally;
  if (!in.word(has_error) || !in.word(r.jobs) || !in.word(r.wall_us) || !in.word(t.runs) || !in.word(t.findings) ||
      !in.word(t.failed_cleanly))
    return bad("counters");
  for (auto* counts : {&t.enabled, &t.drawn})
    for (auto& c : *counts)
      if (!in.word(c)) return bad("fault kinds");
  for (auto& c : t.phases)
    if (!in.word(c)) return bad("phases");
  for (auto& c : t.triggers)
    if (!in.word(c)) return bad("triggers");
  if (!in.word(largest) || !in.word(t.sim_ns) || !in.word(runs)) return bad("largest world");
  t.largest = static_cast<std::uint32_t>(largest);
  for (std::uint64_t i = 0; i < runs; ++i) {
    SeedRun run;
    // The runs hold exactly `runs` seeds: checked before each is expanded, not after.
    if (!in.word(run.first) || !in.word(run.count) || !in.word(run.step) || run.count > t.runs - t.seeds.size())
      return bad("seeds");
    for (std::uint64_t k = 0; k < run.count; ++k) t.seeds.push_back(run.first + k * run.step);
  }
  if (t.seeds.size() != t.runs) return bad("seeds (their count is not the runs counter)");
  if (!in.word(lines) || lines > t.findings) return bad("findings");
  t.finding_lines.resize(lines);
  for (auto& line : t.finding_lines)
    if (!in.text(line)) return bad("finding lines");
  std::string error;
  if (!in.text(error) || !in.done()) return bad("error text");
  if (has_error != 0) r.error = error;
  return r;
}

}  // namespace railcheck::swarm
