#pragma once
// What the zero-buffer world tests share: run a spec through check_zerobuf, and replay a
// counterexample from its trace text the way `railcheck replay` would.
#include <catch2/catch.hpp>

#include "verify/zerobuf/zerobuf_check.hpp"

namespace railcheck::verify::zerobuf::test {

inline ZerobufOutcome check(const ZerobufSpec& s) {
  auto r = check_zerobuf(s);
  REQUIRE(r.ok());
  return r.value();
}

// The counterexample, written as a trace and read back, replays to the same invariant.
inline void replays(const ZerobufSpec& s, const ZerobufOutcome& o) {
  auto t = read_zerobuf_trace(write_zerobuf_trace(s, o), "test.json");
  REQUIRE(t.ok());
  auto r = replay_zerobuf(t.value());
  REQUIRE(r.ok());
  CHECK(r.value().invariant == o.invariant);
  CHECK(r.value().steps_run == o.steps.size());
}

}  // namespace railcheck::verify::zerobuf::test
