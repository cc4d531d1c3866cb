#pragma once
// A named, reusable predicate over a world's states. `check` runs on every state the explorer
// reaches (at_end == false) and once more, with at_end == true, on every end state (no step
// left). It returns nothing when the state is fine, or one line saying what is wrong.
//
// Each protocol area supplies its world's invariants as a list (failover: failover_invariants.hpp;
// the plan and ImmCounter worlds add their own): the explorer takes any such list, and a model
// file may select a subset by name.
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace railcheck::verify {

template <typename World>
struct Invariant {
  std::string name;         // stable, kebab-case: "exactly-once-in-order"
  std::string description;  // one sentence, for `railcheck check --list-invariants` and docs
  std::function<std::optional<std::string>(const World&, bool at_end)> check;
};

// The invariants whose names are in `names` (all of them when `names` is empty); the names not
// found are returned in `unknown` so the caller can report them.
template <typename World>
std::vector<Invariant<World>> select_invariants(std::span<const Invariant<World>> all,
                                                std::span<const std::string> names, std::vector<std::string>& unknown) {
  if (names.empty()) return {all.begin(), all.end()};
  std::vector<Invariant<World>> out;
  for (const auto& n : names) {
    bool found = false;
    for (const auto& inv : all)
      if (inv.name == n) {
        out.push_back(inv);
        found = true;
      }
    if (!found) unknown.push_back(n);
  }
  return out;
}

}  // namespace railcheck::verify
