#include "engine/imm/write_shape.hpp"

namespace railcheck::imm {
namespace {

struct Flatten {
  std::vector<Extent> out;
  void add(const SingleWrite& w) {
    out.push_back({static_cast<std::uint32_t>(out.size()), w.receiver, w.src_offset, w.dst_offset, w.length});
  }
  void operator()(const SingleWrite& w) { add(w); }
  void operator()(const PagedWrite& w) {
    for (const PagePair& p : w.pages) add({w.receiver, p.src_offset, p.dst_offset, w.page_bytes});
  }
  void operator()(const ScatterWrite& w) {
    for (const SingleWrite& part : w.parts) add(part);
  }
};

}  // namespace

std::vector<Extent> extents_of(const WriteShape& shape) {
  Flatten f;
  std::visit(f, shape);
  return std::move(f.out);
}

std::uint64_t total_bytes(const WriteShape& shape) {
  std::uint64_t sum = 0;
  for (const Extent& e : extents_of(shape)) sum += e.length;
  return sum;
}

}  // namespace railcheck::imm
