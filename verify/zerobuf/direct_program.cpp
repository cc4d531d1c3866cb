#include "verify/zerobuf/direct_program.hpp"

#include <fmt/format.h>

namespace railcheck::verify::zerobuf {

using namespace railcheck::zerobuf;

namespace {

std::uint32_t unit_of(std::uint64_t byte_offset) {
  return static_cast<std::uint32_t>(byte_offset / railcheck::zerobuf::kDirectUnitBytes);
}

void barrier(std::vector<DirectStep>& out, DirectPhase phase, std::uint32_t me, std::uint32_t n, std::uint64_t epoch) {
  for (std::uint32_t i = 1; i < n; ++i) {
    DirectStep s;
    s.kind = DirectStepKind::Post;
    s.phase = phase;
    s.peer = (me + i) % n;
    s.epoch = epoch;
    s.offsets = phase == DirectPhase::Start;
    out.push_back(s);
  }
  for (std::uint32_t i = 1; i < n; ++i) {
    DirectStep s;
    s.kind = DirectStepKind::Wait;
    s.phase = phase;
    s.peer = (me + i) % n;
    s.epoch = epoch;
    out.push_back(s);
  }
}

DirectStep data_step(DirectStepKind kind) {
  DirectStep s;
  s.kind = kind;
  s.phase = DirectPhase::Data;
  return s;
}

}  // namespace

std::vector<DirectStep> build_direct_program(FastOp op, std::uint32_t units, std::uint32_t me, std::uint32_t n,
                                             std::uint32_t block, std::uint32_t blocks, std::uint64_t call) {
  std::vector<DirectStep> out;
  const std::uint64_t bytes = units * railcheck::zerobuf::kDirectUnitBytes;
  barrier(out, DirectPhase::Start, me, n, direct_start_epoch(call));
  // The units of a span this block takes, grid-stride.
  const auto mine = [&](Span span, auto&& each) {
    for (std::uint32_t u = block; u < unit_of(span.bytes); u += blocks) each(unit_of(span.offset) + u);
  };
  switch (op) {
    case FastOp::AllGather:
    case FastOp::AllToAll:
      for (std::uint32_t i = 0; i < n; ++i) {
        const std::uint32_t t = (me + i) % n;
        const Span from = piece_to(op, bytes, t), at = piece_at(op, bytes, me);
        mine(from, [&](std::uint32_t u) {
          DirectStep s = data_step(DirectStepKind::Copy);
          s.peer = me;
          s.to = t;
          s.src = u;
          s.dst = unit_of(at.offset) + (u - unit_of(from.offset));
          out.push_back(s);
        });
      }
      break;
    case FastOp::ReduceScatter:
    case FastOp::AllReduce: {
      const Span part = op == FastOp::AllReduce ? direct_part(bytes, me, n) : piece_to(op, bytes, me);
      const Span at = op == FastOp::AllReduce ? part : piece_at(op, bytes, me);
      mine(part, [&](std::uint32_t u) {
        for (std::uint32_t p = 0; p < n; ++p) {  // rank order: every rank sums the same way
          DirectStep s = data_step(DirectStepKind::Load);
          s.peer = p;
          s.src = u;
          s.first = p == 0;
          out.push_back(s);
        }
        const std::uint32_t targets = op == FastOp::AllReduce ? n : 1;
        for (std::uint32_t i = 0; i < targets; ++i) {
          DirectStep s = data_step(DirectStepKind::Store);
          s.to = (me + i) % n;
          s.dst = unit_of(at.offset) + (u - unit_of(part.offset));
          out.push_back(s);
        }
      });
      break;
    }
  }
  barrier(out, DirectPhase::End, me, n, direct_end_epoch(call));
  return out;
}

std::string describe(const DirectStep& s) {
  switch (s.kind) {
    case DirectStepKind::Post:
      return fmt::format("Post {} epoch {}{} to r{}", s.phase == DirectPhase::Start ? "start" : "end", s.epoch,
                         s.offsets ? " + offsets" : "", s.peer);
    case DirectStepKind::Wait:
      return fmt::format("Wait r{}'s {} epoch {}", s.peer, s.phase == DirectPhase::Start ? "start" : "end", s.epoch);
    case DirectStepKind::Copy:
      return fmt::format("Copy r{}'s input unit {} -> r{}'s output unit {}", s.peer, s.src, s.to, s.dst);
    case DirectStepKind::Load: return fmt::format("{} r{}'s input unit {}", s.first ? "Load" : "Add", s.peer, s.src);
    case DirectStepKind::Store: return fmt::format("Store the sum -> r{}'s output unit {}", s.to, s.dst);
  }
  return "?";
}

}  // namespace railcheck::verify::zerobuf
