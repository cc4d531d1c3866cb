#pragma once
// What a fast-path world saw go wrong on the path to its state: the first violation under each
// invariant's name (sticky, so a state's verdict does not depend on later steps), read by the
// recorded_violation invariants (fast_liveness.hpp).
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace railcheck::verify::zerobuf {

class RecordedViolations {
 public:
  void record(std::string invariant, std::string message) {
    if (!find(invariant)) seen_.emplace_back(std::move(invariant), std::move(message));
  }
  std::optional<std::string> find(std::string_view invariant) const {
    for (const auto& [name, message] : seen_)
      if (name == invariant) return message;
    return std::nullopt;
  }
  // Part of the state's fingerprint: a path that saw a violation differs from one that did not.
  std::size_t size() const { return seen_.size(); }

 private:
  std::vector<std::pair<std::string, std::string>> seen_;
};

}  // namespace railcheck::verify::zerobuf
