#pragma once
// Where a sweep's rows go: results.jsonl (one JSON object per run) and results.csv (the same
// rows that have metrics, flattened), both appended and flushed row by row so an interrupted sweep keeps every
// point it finished. The JSON lines are the record; --resume reads them back.
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "engine/core/result.hpp"

namespace railcheck::sweep {

// A row's outcome when the child gave no summary (it crashed or rejected its input).
constexpr std::string_view kOutcomeError = "error";

class ResultLog {
 public:
  // Creates `dir` if needed. Without `resume`, existing results there are an error rather than
  // silently mixed with a new sweep's.
  static Result<ResultLog> open(const std::string& dir, bool resume);

  // Point ids with a summary already recorded (error rows are run again).
  const std::set<std::string>& finished() const { return finished_; }
  void append(const nlohmann::json& row);

  ResultLog(ResultLog&&) = default;

 private:
  ResultLog() = default;
  std::ofstream jsonl_;
  std::ofstream csv_;
  std::vector<std::string> columns_;  // empty until the first row (or read from an existing file)
  std::set<std::string> finished_;
};

// A row flattened to CSV cells: params.<key> becomes <key>, nested objects become a.b.
std::vector<std::pair<std::string, std::string>> flatten(const nlohmann::json& row);

}  // namespace railcheck::sweep
