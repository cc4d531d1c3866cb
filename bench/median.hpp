#pragma once
// The median the benches report over repeated runs (STYLE.md 11: ratios measured side by side,
// medians of repeats).
#include <algorithm>
#include <vector>

namespace railcheck::bench {

// The median of xs (the upper middle one for an even count: no averaging of two runs).
inline double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  return xs.empty() ? 0.0 : xs[xs.size() / 2];
}

}  // namespace railcheck::bench
