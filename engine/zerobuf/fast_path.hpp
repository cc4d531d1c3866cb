#pragma once
// The two fast paths of the zero-buffer collectives (issue 29), as plain functions that the CUDA
// kernels (backends/hw/cuda/zerobuf/fast_kernels.cu), the host that picks a path
// (communicator.cpp) and the checker worlds (verify/zerobuf) share. Plain data only: nvcc
// compiles this header.
//
// LL (small messages; "low latency", after NCCL's LL protocol): the flag travels with the data.
//   Every rank owns an LL area in the front of its window: [parity 2][sender nranks][line], each
//   line 16 bytes = { data0, flag, data1, flag } (8 data bytes, two 4-byte words, each with its
//   own copy of the flag, so each 8-byte half is one single-copy-atomic store on its own).
//   Call k of a communicator's LL calls (k = 1, 2, ...; held on the device, so a CUDA graph
//   replays it right) uses epoch k and parity k & 1:
//     send     for every peer p: the piece of my input meant for p (piece_to) goes, line by line,
//              into p's LL area [k & 1][me] with flag k
//     receive  for every line of my output: spin on my LL area [k & 1][p] until both halves
//              carry flag k, then copy into output block p (all-gather, all-to-all) or sum over
//              every rank in rank order (all-reduce, reduce-scatter: every rank sums in the same
//              order, so every rank holds the same bits)
//   A receiver clears every line it has taken (a local store), so a line no call has written
//   since is 0, never an epoch: after the 32-bit epoch wraps, a line left from 2^32 calls ago (a
//   larger piece than any since) cannot pass for this call's.
//   One kernel, no barrier, no fence. Why two parities are enough: a sender writes slot
//   [k & 1] again only in call k + 2, which it starts after its call k + 1 ended, which needed
//   my call k + 1 lines, which I sent only after my call k (and its reads of the slot) ended.
//   That holds when every rank sends something to every peer in every LL call, which each of the
//   four collectives does, and when a communicator's calls run in order on one stream.
//
// Direct (large messages, zero copy): every rank reads and writes the peers' buffers in place.
//   Every rank owns a barrier area: one slot per (block, sender) of { input offset, output
//   offset, epoch }. Call c (device counter) uses epochs 2c + 1 (start) and 2c + 2 (end) on the
//   same slots; a wait is satisfied by a slot at or past its epoch (epochs only grow).
//   Block b of every rank:
//     start    publish my offsets and the start epoch to every peer's slot [b][me] (release),
//              wait for every peer's [b][p] (acquire): their buffers are ready and found
//     data     block b's share of the op (below), grid-stride over 16-byte units
//     end      every thread's stores issued, then publish the end epoch (fence, release); wait
//              for every peer's end: nobody reads my input or writes my output any more
//   The ops: all-gather and all-to-all push my input (block p of it, for all-to-all) into
//   every rank's output block [me]; reduce-scatter pulls block [me] of every rank's input and
//   sums it in rank order into my output; all-reduce is a two-shot in one pass: I own part
//   [me] (direct_part), sum it from every rank's input in rank order and write the sum into
//   every rank's output. In place (input == output) an element of part [me] is read and then
//   written only by the one thread of its owner, and no other rank touches part [me].
//   Because block b of every rank covers the same units, block-level barriers are enough: no
//   grid-wide barrier, no cooperative launch.
//
// LL two-shot (all-reduce in the mid range on more than two ranks, issue 43): the one-shot LL
//   all-reduce pushes the whole buffer to every peer, (n - 1) x the bytes; the direct path's two
//   barriers and n-way two-shot cost a fixed ~15 us. The LL two-shot pushes 2 x (n - 1) / n x
//   the bytes through the same LL areas, as two LL phases of one call, each with its own epoch:
//     phase 1  (reduce-scatter, epoch e1 = ll_next_epoch(counter)): the buffer's lines are cut
//              into nranks parts (ll_two_shot_part); for every peer p, line j of part p of my
//              input goes into p's LL area [e1 & 1][me] line j. For every line j of my own part:
//              wait for line j from every peer, sum in rank order (my input included), write the
//              sum into my output's part (in place too: nobody else reads or writes my part)
//     phase 2  (all-gather, epoch e2 = ll_next_epoch(e1)): the thread that summed line j sends
//              it, after the sum, into every peer's area [e2 & 1][me] line j; for every peer q and
//              every line j of q's part: wait for q's line j, write it into my output's part q
//     the device counter ends at e2, so a one-shot LL call after it uses the next epoch and the
//     parity keeps alternating from phase to phase.
//   Two parities are still enough: a sender S writes receiver R's slot [P][S] again two phases
//   later (phase k, then k + 2), and R has taken all its phase-k lines from S by then:
//     - phase k + 2 is a phase 2 (k + 1 its phase 1): S sends its phase-2 line j only after
//       taking line j of phase k + 1 from R, which R sent in a kernel started after its phase-k
//       kernel had ended;
//     - phase k + 2 is a one-shot call or a phase 1: S starts it after its kernel of phase k + 1
//       ended, which took every line R sent S in phase k + 1. If k + 1 is a one-shot call or a
//       phase 1, R sent those after its phase-k kernel ended; if k + 1 is a phase 2 (k its
//       phase 1), R sent phase-2 line j only after taking line j of phase 1 from every peer, S
//       included, and those lines j are every line S sent R in phase k.
//   Both cases need, as one-shot LL does, every rank to send something to every peer in every
//   phase: every part must hold at least one line (ll_two_shot_ok).
//   In place, a phase-2 line j of part q overwrites my input's line j of part q, which my
//   phase 1 must have sent to q first: it has, since q's line j is q's sum of every rank's line
//   j, mine included (the data carries the order; no rule for the kernel beyond "phase-2 line
//   j is sent after its sum").
//   The kernel also clears each line it takes (as one-shot LL): the clear of a phase-1 line
//   and the phase-2 send that follows it in the same thread must be ordered (a fence between
//   the thread's phase-1 and phase-2 loops), or a delayed clear could erase the line a fast
//   sender writes two phases later. The checker world does not model the clearing (as for
//   one-shot LL); it checks the epochs, parities, parts and the data.
//   backends/hw/cuda/zerobuf/fast_kernels.cu runs it (ll_two_shot_kernel), opt-in:
//   FastPathLimits::ll_two_shot_max_bytes is 0 by default (ZEROBUF_LL2_MAX_BYTES), so
//   choose_path returns it only where asked for: on 4 x H200 it tied the direct path at 512 KiB and
//   lost from 1 MiB (docs/zerobuf.md, "Four GPUs"); verify/zerobuf's
//   LL world checks it (`two_shot = true`, models zerobuf_ll2_*.toml).
#include <cstdint>

#include "engine/zerobuf/flag_step.hpp"

namespace railcheck::zerobuf {

enum class FastPath : std::uint8_t {
  Program = 0,  // the flag-program interpreter (collective_program.hpp): any size, any layout
  Ll = 1,
  Direct = 2,
  LlTwoShot = 3,  // all-reduce only: LL reduce-scatter then LL all-gather in one call (see above)
};

// The four collectives the fast paths run, numbered as CollKind's first four.
enum class FastOp : std::uint8_t { AllGather = 0, ReduceScatter = 1, AllReduce = 2, AllToAll = 3 };

RAILCHECK_HD constexpr bool fast_reduces(FastOp op) { return op == FastOp::AllReduce || op == FastOp::ReduceScatter; }

struct Span {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};

// The piece of a sender's input that goes to rank `p` (`bytes` as CollCall's: per rank for
// all-gather / reduce-scatter output, per block for all-to-all, the whole buffer for all-reduce).
RAILCHECK_HD constexpr Span piece_to(FastOp op, std::uint64_t bytes, std::uint32_t p) {
  return (op == FastOp::ReduceScatter || op == FastOp::AllToAll) ? Span{p * bytes, bytes} : Span{0, bytes};
}
// Where in the receiver's output the piece from rank `p` lands (summed for the reducing ops).
RAILCHECK_HD constexpr Span piece_at(FastOp op, std::uint64_t bytes, std::uint32_t p) {
  return (op == FastOp::AllGather || op == FastOp::AllToAll) ? Span{p * bytes, bytes} : Span{0, bytes};
}

// ---- LL ----
struct LlLine {
  std::uint32_t data0;
  std::uint32_t flag0;
  std::uint32_t data1;
  std::uint32_t flag1;
};
static_assert(sizeof(LlLine) == 16);

RAILCHECK_HD constexpr std::uint32_t ll_parity(std::uint32_t epoch) { return epoch & 1U; }
RAILCHECK_HD constexpr bool ll_line_ready(const LlLine& l, std::uint32_t epoch) {
  return l.flag0 == epoch && l.flag1 == epoch;
}
// Lines a piece of `bytes` needs (8 data bytes a line; the last may be half or partly used).
RAILCHECK_HD constexpr std::uint64_t ll_lines(std::uint64_t bytes) { return (bytes + 7) / 8; }
// Offset of line 0 of slot [parity][sender] inside the LL area, `slot_lines` lines a slot.
RAILCHECK_HD constexpr std::uint64_t ll_slot_offset(std::uint32_t parity, std::uint32_t sender, std::uint32_t nranks,
                                                    std::uint64_t slot_lines) {
  return (static_cast<std::uint64_t>(parity) * nranks + sender) * slot_lines * sizeof(LlLine);
}
RAILCHECK_HD constexpr std::uint64_t ll_area_bytes(std::uint32_t nranks, std::uint64_t slot_lines) {
  return 2ULL * nranks * slot_lines * sizeof(LlLine);
}
// The epoch after `epoch`. 0 is never used (a cleared line must never look written), and the
// parity alternates across the wrap too: 0xFFFFFFFF (odd) is followed by 2, not 1, or two calls
// in a row would share the odd slots (found by the LL checker world: zerobuf_ll_epoch_wrap.toml,
// a hang after 2^32 - 1 calls, hours of serving).
RAILCHECK_HD constexpr std::uint32_t ll_next_epoch(std::uint32_t epoch) { return epoch == 0xFFFFFFFFU ? 2 : epoch + 1; }

// ---- Direct ----
constexpr std::uint32_t kMaxDirectBlocks = 256;
constexpr std::uint64_t kDirectUnitBytes = 16;  // what one thread moves at a time (uint4 / float4)

struct BarrierSlot {
  std::uint64_t input_offset;
  std::uint64_t output_offset;
  std::uint64_t epoch;
  std::uint64_t pad;
};
static_assert(sizeof(BarrierSlot) == 32);

RAILCHECK_HD constexpr std::uint64_t barrier_slot_offset(std::uint32_t block, std::uint32_t sender,
                                                         std::uint32_t nranks) {
  return (static_cast<std::uint64_t>(block) * nranks + sender) * sizeof(BarrierSlot);
}
RAILCHECK_HD constexpr std::uint64_t barrier_area_bytes(std::uint32_t nranks) {
  return static_cast<std::uint64_t>(kMaxDirectBlocks) * nranks * sizeof(BarrierSlot);
}
RAILCHECK_HD constexpr std::uint64_t direct_start_epoch(std::uint64_t call) { return 2 * call + 1; }
RAILCHECK_HD constexpr std::uint64_t direct_end_epoch(std::uint64_t call) { return 2 * call + 2; }

// The part of an all-reduce of `bytes` that rank r owns on the direct path, in 16-byte units
// (the path takes only multiples of 16 bytes), the remainder spread over the first ranks.
RAILCHECK_HD constexpr Span direct_part(std::uint64_t bytes, std::uint32_t r, std::uint32_t nranks) {
  const std::uint64_t units = bytes / 16, base = units / nranks, extra = units % nranks;
  const std::uint64_t first = r * base + (r < extra ? r : extra);
  return Span{first * 16, (base + (r < extra ? 1 : 0)) * 16};
}

// ---- LL two-shot ----
// The lines of an all-reduce of `bytes` that rank r owns in the LL two-shot (as a byte span of
// whole 8-byte lines, the last part ending with the buffer: it may end in half a line), the
// remainder spread over the first ranks as direct_part does.
RAILCHECK_HD constexpr Span ll_two_shot_part(std::uint64_t bytes, std::uint32_t r, std::uint32_t nranks) {
  const std::uint64_t lines = ll_lines(bytes), base = lines / nranks, extra = lines % nranks;
  const std::uint64_t first = r * base + (r < extra ? r : extra);
  const std::uint64_t count = base + (r < extra ? 1 : 0);
  const std::uint64_t begin = first * 8, end = (first + count) * 8 < bytes ? (first + count) * 8 : bytes;
  return Span{begin, end > begin ? end - begin : 0};
}
// Whether the two-shot can take an all-reduce of `bytes`: 4-byte words and at least one line
// for every rank (every rank must send to every peer in both phases, see above).
RAILCHECK_HD constexpr bool ll_two_shot_ok(std::uint64_t bytes, std::uint32_t nranks) {
  return nranks >= 2 && bytes % 4 == 0 && ll_lines(bytes) >= nranks;
}
// The epochs of a two-shot call whose counter holds `counter` (the last LL epoch used): phase 1,
// then phase 2, which the counter holds after the call.
RAILCHECK_HD constexpr std::uint32_t ll_two_shot_epoch1(std::uint32_t counter) { return ll_next_epoch(counter); }
RAILCHECK_HD constexpr std::uint32_t ll_two_shot_epoch2(std::uint32_t counter) {
  return ll_next_epoch(ll_next_epoch(counter));
}
// Lines a slot must hold for two-shot calls up to `max_bytes` (the largest part).
RAILCHECK_HD constexpr std::uint64_t ll_two_shot_slot_lines(std::uint64_t max_bytes, std::uint32_t nranks) {
  return nranks == 0 ? 0 : (ll_lines(max_bytes) + nranks - 1) / nranks;
}
// Bytes one rank pushes through the two-shot: every part but its own, twice (both phases).
RAILCHECK_HD constexpr std::uint64_t ll_two_shot_send_bytes(std::uint64_t bytes, std::uint32_t nranks) {
  return nranks > 1 ? 2 * (bytes - bytes / nranks) : bytes;
}

// ---- Choosing ----
// Bytes one rank pushes through the LL path for a call: its piece to each of the other ranks.
RAILCHECK_HD constexpr std::uint64_t ll_send_bytes(std::uint64_t bytes, std::uint32_t nranks) {
  return nranks > 1 ? bytes * (nranks - 1) : bytes;
}
// The largest piece the LL area must hold for a limit of `ll_max_send_bytes`.
RAILCHECK_HD constexpr std::uint64_t ll_max_piece(std::uint64_t ll_max_send_bytes, std::uint32_t nranks) {
  return (nranks > 1 ? ll_max_send_bytes / (nranks - 1) : ll_max_send_bytes) / 4 * 4;
}

// Where LL stops: LL while a rank pushes at most `ll_max_send_bytes` (LL lines carry half data,
// so its cost grows twice as fast as the direct path's, whose barriers cost a fixed ~7 us). The
// default is the crossover measured on 2 x H200 (docs/zerobuf.md, "Thresholds"): LL wins up to
// 1 MiB pushed, direct from 2 MiB, for every op. `forced` pins one path for measuring.
struct FastPathLimits {
  std::uint64_t ll_max_send_bytes = 1ULL << 20;
  // All-reduce: the LL two-shot for sizes past one-shot LL up to this many bytes, on at least
  // `ll_two_shot_min_ranks` ranks. 0: off, the default: measured, it loses to one-shot LL and
  // direct on 2 ranks and ties or loses on 4 (docs/zerobuf.md); 8 ranks are not measured.
  std::uint64_t ll_two_shot_max_bytes = 0;
  std::uint32_t ll_two_shot_min_ranks = 3;
  bool enabled = true;                  // false: every call takes the flag program
  FastPath forced = FastPath::Program;  // with `force`: the only path tried
  bool force = false;
};

// The path for a call: LL for 4-byte multiples a rank pushes at most the LL limit of, direct for
// 16-byte multiples on 16-byte aligned buffers, else the flag program. `aligned16`: both buffers'
// addresses (LL also needs them 4-byte aligned: the caller checks).
RAILCHECK_HD constexpr FastPath choose_path(FastOp op, std::uint64_t bytes, std::uint32_t nranks, bool aligned16,
                                            const FastPathLimits& lim) {
  if (!lim.enabled || bytes == 0) return FastPath::Program;
  const bool ll_ok = bytes % 4 == 0 && bytes <= ll_max_piece(lim.ll_max_send_bytes, nranks);
  const bool direct_ok = aligned16 && bytes % 16 == 0;
  const bool two_shot_ok = op == FastOp::AllReduce && ll_two_shot_ok(bytes, nranks) &&
                           bytes <= lim.ll_two_shot_max_bytes && nranks >= lim.ll_two_shot_min_ranks;
  if (lim.force) {
    if (lim.forced == FastPath::Ll) return ll_ok ? FastPath::Ll : FastPath::Program;
    if (lim.forced == FastPath::Direct) return direct_ok ? FastPath::Direct : FastPath::Program;
    if (lim.forced == FastPath::LlTwoShot) return two_shot_ok ? FastPath::LlTwoShot : FastPath::Program;
    return FastPath::Program;
  }
  if (ll_ok) return FastPath::Ll;
  if (two_shot_ok) return FastPath::LlTwoShot;
  if (direct_ok) return FastPath::Direct;
  return FastPath::Program;
}

}  // namespace railcheck::zerobuf
