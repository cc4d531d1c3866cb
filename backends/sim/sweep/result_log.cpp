#include "backends/sim/sweep/result_log.hpp"

#include <fmt/format.h>

#include <filesystem>

namespace railcheck::sweep {
namespace {

std::string csv_cell(std::string_view s) {
  if (s.find_first_of(",\"\n") == std::string_view::npos) return std::string(s);
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string cell_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

void flatten_into(const nlohmann::json& obj, const std::string& prefix,
                  std::vector<std::pair<std::string, std::string>>& out) {
  for (const auto& [k, v] : obj.items()) {
    const std::string name = prefix == "params." ? k : prefix + k;
    if (v.is_object()) {
      flatten_into(v, k == "params" && prefix.empty() ? "params." : name + ".", out);
    } else {
      out.emplace_back(name, cell_text(v));
    }
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> flatten(const nlohmann::json& row) {
  std::vector<std::pair<std::string, std::string>> out;
  flatten_into(row, "", out);
  return out;
}

Result<ResultLog> ResultLog::open(const std::string& dir, bool resume) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error{fmt::format("cannot create output folder {}: {}", dir, ec.message()), {}};
  const fs::path jsonl = fs::path(dir) / "results.jsonl";
  const fs::path csv = fs::path(dir) / "results.csv";
  // Empty files are what a sweep that stopped on bad input leaves; they hold nothing to lose.
  const auto holds_rows = [](const fs::path& f) {
    std::error_code e;
    return fs::exists(f) && fs::file_size(f, e) > 0;
  };
  if (!resume && (holds_rows(jsonl) || holds_rows(csv)))
    return Error{fmt::format("{} already holds sweep results", dir),
                 "pass --resume to continue that sweep, or pick another --out"};
  ResultLog log;
  if (std::ifstream in(jsonl); in) {
    std::string line;
    for (std::size_t n = 1; std::getline(in, line); ++n) {
      if (line.empty()) continue;
      const auto row = nlohmann::json::parse(line, nullptr, false);
      // A line cut short by a kill is the only kind of damage an append-only log can take; that
      // point simply runs again.
      if (row.is_discarded() || !row.is_object() || !row.contains("point")) continue;
      if (row.value("outcome", std::string(kOutcomeError)) != kOutcomeError)
        log.finished_.insert(row["point"].get<std::string>());
    }
  }
  if (std::ifstream in(csv); in) {
    std::string header;
    std::getline(in, header);
    std::size_t start = 0;
    while (!header.empty() && start <= header.size()) {
      const std::size_t comma = std::min(header.find(',', start), header.size());
      log.columns_.push_back(header.substr(start, comma - start));
      start = comma + 1;
    }
  }
  log.jsonl_.open(jsonl, std::ios::app);
  log.csv_.open(csv, std::ios::app);
  if (!log.jsonl_ || !log.csv_) return Error{fmt::format("cannot write results in {}", dir), {}};
  return log;
}

void ResultLog::append(const nlohmann::json& row) {
  jsonl_ << row.dump() << "\n" << std::flush;
  // Error rows carry no metrics; in the CSV they would only break the columns.
  if (row.value("outcome", std::string(kOutcomeError)) == kOutcomeError) return;
  const auto cells = flatten(row);
  if (columns_.empty()) {
    std::string header;
    for (const auto& [name, _] : cells) {
      columns_.push_back(name);
      header += (header.empty() ? "" : ",") + csv_cell(name);
    }
    csv_ << header << "\n";
  }
  std::string line;
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    std::string value;
    for (const auto& [name, v] : cells)
      if (name == columns_[i]) value = v;
    line += (i == 0 ? "" : ",") + csv_cell(value);
  }
  csv_ << line << "\n" << std::flush;
}

}  // namespace railcheck::sweep
