#include "engine/zerobuf/collective_program.hpp"

#include <fmt/format.h>

#include <array>

namespace railcheck::zerobuf {
namespace {

constexpr std::array<std::pair<CollKind, std::string_view>, 6> kKinds = {{{CollKind::AllGather, "all-gather"},
                                                                          {CollKind::ReduceScatter, "reduce-scatter"},
                                                                          {CollKind::AllReduce, "all-reduce"},
                                                                          {CollKind::AllToAll, "all-to-all"},
                                                                          {CollKind::Dispatch, "dispatch"},
                                                                          {CollKind::Combine, "combine"}}};

// What one phase does with each peer p (and with this rank's own part, at p == rank).
struct PeerPart {
  std::uint64_t publish = 0;  // offset this rank publishes to p (Ready: where p writes; Posted: where p reads)
  std::uint64_t local = 0;    // push: source of the write to p; pull: destination of the read from p
  std::uint64_t bytes = 0;    // bytes written to / read from p
};

std::uint32_t peer_at(std::uint32_t rank, std::uint32_t i, std::uint32_t n) { return (rank + i) % n; }

FlagStep post(FlagKind k, std::uint32_t peer, std::uint64_t epoch, std::uint64_t offset) {
  FlagStep s;
  s.kind = StepKind::Post;
  s.flag = k;
  s.peer = peer;
  s.epoch = epoch;
  s.post_offset = offset;
  return s;
}

FlagStep wait(FlagKind k, std::uint32_t peer, std::uint64_t epoch) {
  FlagStep s;
  s.kind = StepKind::Wait;
  s.flag = k;
  s.peer = peer;
  s.epoch = epoch;
  return s;
}

// The self part: a copy inside the window (skipped when already in place or empty).
void local_copy(std::vector<FlagStep>& out, std::uint64_t src, std::uint64_t dst, std::uint64_t bytes) {
  if (src == dst || bytes == 0) return;
  FlagStep s;
  s.kind = StepKind::Local;
  s.src_offset = src;
  s.local_offset = dst;
  s.bytes = bytes;
  out.push_back(s);
}

// `self` is this rank's own part: push copies self.local -> self.publish, pull copies
// self.publish -> self.local (then sums the peers' parts into it).
void push_phase(std::vector<FlagStep>& out, std::uint32_t rank, std::uint32_t n, std::uint64_t epoch,
                const std::vector<PeerPart>& parts) {
  for (std::uint32_t i = 1; i < n; ++i) {
    const std::uint32_t p = peer_at(rank, i, n);
    out.push_back(post(FlagKind::Ready, p, epoch, parts[p].publish));
  }
  local_copy(out, parts[rank].local, parts[rank].publish, parts[rank].bytes);
  for (std::uint32_t i = 1; i < n; ++i) {
    const std::uint32_t p = peer_at(rank, i, n);
    out.push_back(wait(FlagKind::Ready, p, epoch));
    if (parts[p].bytes > 0) {
      FlagStep w;
      w.kind = StepKind::Write;
      w.peer = p;
      w.epoch = epoch;
      w.local_offset = parts[p].local;
      w.bytes = parts[p].bytes;
      out.push_back(w);
    }
    out.push_back(post(FlagKind::Written, p, epoch, 0));
  }
  for (std::uint32_t i = 1; i < n; ++i) out.push_back(wait(FlagKind::Written, peer_at(rank, i, n), epoch));
}

void pull_phase(std::vector<FlagStep>& out, std::uint32_t rank, std::uint32_t n, std::uint64_t epoch,
                const std::vector<PeerPart>& parts, Reduce reduce) {
  for (std::uint32_t i = 1; i < n; ++i) {
    const std::uint32_t p = peer_at(rank, i, n);
    out.push_back(post(FlagKind::Posted, p, epoch, parts[p].publish));
  }
  local_copy(out, parts[rank].publish, parts[rank].local, parts[rank].bytes);
  for (std::uint32_t i = 1; i < n; ++i) {
    const std::uint32_t p = peer_at(rank, i, n);
    out.push_back(wait(FlagKind::Posted, p, epoch));
    if (parts[p].bytes > 0) {
      FlagStep r;
      r.kind = StepKind::Read;
      r.reduce = reduce;
      r.peer = p;
      r.epoch = epoch;
      r.local_offset = parts[p].local;
      r.bytes = parts[p].bytes;
      out.push_back(r);
    }
    out.push_back(post(FlagKind::ReadDone, p, epoch, 0));
  }
  for (std::uint32_t i = 1; i < n; ++i) out.push_back(wait(FlagKind::ReadDone, peer_at(rank, i, n), epoch));
}

Error bad_call(const CollCall& c, std::string what, std::string hint) {
  return Error{fmt::format("zerobuf {}: {}", to_string(c.kind), what), std::move(hint)};
}

}  // namespace

std::string_view to_string(CollKind k) {
  for (const auto& [kind, name] : kKinds)
    if (kind == k) return name;
  return "?";
}

std::optional<CollKind> parse_coll_kind(std::string_view s) {
  for (const auto& [kind, name] : kKinds)
    if (name == s) return kind;
  return std::nullopt;
}

std::uint32_t phases(CollKind k) { return k == CollKind::AllReduce ? 2 : 1; }

std::string_view to_string(FlagKind k) {
  switch (k) {
    case FlagKind::Ready: return "Ready";
    case FlagKind::Written: return "Written";
    case FlagKind::Posted: return "Posted";
    case FlagKind::ReadDone: return "ReadDone";
  }
  return "?";
}

Part allreduce_part(std::uint64_t bytes, std::uint32_t r, std::uint32_t nranks) {
  const std::uint64_t elems = bytes / 4;
  const std::uint64_t base = elems / nranks, extra = elems % nranks;
  const std::uint64_t first = r * base + std::min<std::uint64_t>(r, extra);
  return Part{first * 4, (base + (r < extra ? 1 : 0)) * 4};
}

Result<std::vector<FlagStep>> build_program(const CollCall& c, std::uint32_t rank, std::uint32_t n,
                                            std::uint64_t first_epoch) {
  if (n == 0 || rank >= n) return bad_call(c, fmt::format("rank {} of {} ranks", rank, n), "0 <= rank < nranks");
  if (first_epoch == 0) return bad_call(c, "epoch 0", "epochs start at 1: a zeroed flag slot means 'never posted'");
  const bool reduces = c.kind == CollKind::ReduceScatter || c.kind == CollKind::AllReduce;
  const bool vector_call = c.kind == CollKind::Dispatch || c.kind == CollKind::Combine;
  if (!vector_call && c.bytes == 0) return bad_call(c, "0 bytes", "give a size of at least one element");
  if (reduces && c.bytes % 4 != 0)
    return bad_call(c, fmt::format("{} bytes", c.bytes), "reductions are f32 sums: a multiple of 4 bytes");
  if (vector_call) {
    for (const auto* v : {&c.send_bytes, &c.send_displ, &c.recv_bytes, &c.recv_displ})
      if (v->size() != n)
        return bad_call(c, fmt::format("{} counts or displacements for {} ranks", v->size(), n),
                        "give send/recv bytes and displacements for every rank");
    if (c.send_bytes[rank] != c.recv_bytes[rank])
      return bad_call(c, fmt::format("sends {} B to itself but receives {} B", c.send_bytes[rank], c.recv_bytes[rank]),
                      "a rank's own part must have the same size both ways");
  }
  std::vector<FlagStep> out;
  std::vector<PeerPart> parts(n);
  const std::uint64_t in = c.input_offset, outb = c.output_offset, b = c.bytes;
  switch (c.kind) {
    case CollKind::AllGather:
      for (std::uint32_t p = 0; p < n; ++p) parts[p] = PeerPart{outb + p * b, in, b};
      push_phase(out, rank, n, first_epoch, parts);
      break;
    case CollKind::AllToAll:
      for (std::uint32_t p = 0; p < n; ++p) parts[p] = PeerPart{outb + p * b, in + p * b, b};
      push_phase(out, rank, n, first_epoch, parts);
      break;
    case CollKind::Dispatch:
      for (std::uint32_t p = 0; p < n; ++p)
        parts[p] = PeerPart{outb + c.recv_displ[p], in + c.send_displ[p], c.send_bytes[p]};
      parts[rank].bytes = c.send_bytes[rank];
      push_phase(out, rank, n, first_epoch, parts);
      break;
    case CollKind::ReduceScatter:
      for (std::uint32_t p = 0; p < n; ++p) parts[p] = PeerPart{in + p * b, outb, b};
      pull_phase(out, rank, n, first_epoch, parts, Reduce::SumF32);
      break;
    case CollKind::Combine:
      for (std::uint32_t p = 0; p < n; ++p)
        parts[p] = PeerPart{in + c.send_displ[p], outb + c.recv_displ[p], c.recv_bytes[p]};
      pull_phase(out, rank, n, first_epoch, parts, Reduce::None);
      break;
    case CollKind::AllReduce: {
      const Part mine = allreduce_part(b, rank, n);
      for (std::uint32_t p = 0; p < n; ++p) {
        const Part theirs = allreduce_part(b, p, n);
        parts[p] = PeerPart{in + theirs.offset, outb + mine.offset, mine.bytes};
      }
      parts[rank].bytes = mine.bytes;
      pull_phase(out, rank, n, first_epoch, parts, Reduce::SumF32);
      for (std::uint32_t p = 0; p < n; ++p) {
        const Part theirs = allreduce_part(b, p, n);
        parts[p] = PeerPart{outb + theirs.offset, outb + mine.offset, mine.bytes};
      }
      parts[rank] = PeerPart{outb + mine.offset, outb + mine.offset, 0};  // already in place
      push_phase(out, rank, n, first_epoch + 1, parts);
      break;
    }
  }
  return out;
}

std::string describe(const FlagStep& s) {
  switch (s.kind) {
    case StepKind::Post:
      return fmt::format("Post {} to rank {} (epoch {}, offset {:#x})", to_string(s.flag), s.peer, s.epoch,
                         s.post_offset);
    case StepKind::Wait: return fmt::format("Wait {} from rank {} (epoch {})", to_string(s.flag), s.peer, s.epoch);
    case StepKind::Write:
      return fmt::format("Write {} B from {:#x} into rank {}'s output", s.bytes, s.local_offset, s.peer);
    case StepKind::Read:
      return fmt::format("{} {} B of rank {}'s input into {:#x}", s.reduce == Reduce::SumF32 ? "Sum" : "Read", s.bytes,
                         s.peer, s.local_offset);
    case StepKind::Local: return fmt::format("Copy {} B {:#x} -> {:#x}", s.bytes, s.src_offset, s.local_offset);
  }
  return "?";
}

}  // namespace railcheck::zerobuf
