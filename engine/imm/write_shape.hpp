#pragma once
// The shapes of one-sided transfers TransferEngine offers (arXiv 2510.27656 §3; seed, first
// entry): one contiguous write; paged writes, many non-contiguous source/destination pages as
// for a KV cache; a scatter to several receivers with different sizes, as for MoE dispatch.
// Every shape flattens to extents, each one contiguous range on both sides.
#include <cstdint>
#include <variant>
#include <vector>

namespace railcheck::imm {

struct SingleWrite {
  std::uint32_t receiver = 0;
  std::uint64_t src_offset = 0;
  std::uint64_t dst_offset = 0;
  std::uint64_t length = 0;
};

struct PagePair {
  std::uint64_t src_offset = 0;
  std::uint64_t dst_offset = 0;
};

struct PagedWrite {
  std::uint32_t receiver = 0;
  std::uint64_t page_bytes = 0;
  std::vector<PagePair> pages;
};

struct ScatterWrite {
  std::vector<SingleWrite> parts;  // one per receiver, sizes may differ
};

using WriteShape = std::variant<SingleWrite, PagedWrite, ScatterWrite>;

// The registered memory both sides address into: the sender's source region and each
// receiver's destination region, in bytes. Valid remote addresses are [0, bytes).
struct Regions {
  std::uint64_t src_bytes = 0;
  std::vector<std::uint64_t> dst_bytes;  // indexed by receiver
};

// One contiguous range; `index` is its position in the shape (page number, scatter part).
struct Extent {
  std::uint32_t index = 0;
  std::uint32_t receiver = 0;
  std::uint64_t src_offset = 0;
  std::uint64_t dst_offset = 0;
  std::uint64_t length = 0;
};

std::vector<Extent> extents_of(const WriteShape& shape);
std::uint64_t total_bytes(const WriteShape& shape);

}  // namespace railcheck::imm
