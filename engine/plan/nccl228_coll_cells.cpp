// scheduleCollTasksToPlan's cell split, NCCL 2.28.9 src/enqueue.cc (nccl228_coll_cells.hpp).
// Signed 64-bit arithmetic throughout; NCCL's size_t expressions never go negative on the paths
// taken here, and the comments name the variable each line mirrors.
#include "engine/plan/nccl228_coll_cells.hpp"

#include <algorithm>

namespace railcheck::plan {
namespace {

std::int64_t div_up(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

std::uint64_t traffic_per_channel_2_28(std::uint64_t plan_traffic, int plan_channels) {
  return std::max<std::uint64_t>(kMinTrafficPerChannel,
                                 plan_traffic / static_cast<std::uint64_t>(std::max(1, plan_channels)));
}

CellSplit place_cells_2_28(CellCursor& cur, std::uint64_t count_u, std::uint32_t elem_size_u, int traffic_per_byte,
                           bool ll) {
  const auto count = static_cast<std::int64_t>(count_u);
  const auto elem = static_cast<std::int64_t>(elem_size_u);
  const auto per_channel = static_cast<std::int64_t>(cur.per_channel);
  std::int64_t tpb = traffic_per_byte * (ll ? 4 : 1);  // trafficPerByte
  const std::int64_t cell_size = div_up(div_up(static_cast<std::int64_t>(kMinTrafficPerChannel), tpb), 16) * 16;
  const std::int64_t elems_per_cell = cell_size / elem;  // elementsPerCell
  const std::int64_t cells = div_up(count * elem, cell_size);
  const std::int64_t traffic_per_elem = elem * tpb;
  const std::int64_t traffic_per_cell = cell_size * tpb;
  std::int64_t cells_per_channel = std::min(cells, div_up(per_channel, traffic_per_cell));
  std::int64_t cells_lo = 0;
  if (cur.channel + 1 == cur.max_channels) {
    cells_lo = cells;  // "On last channel everything goes to lo"
  } else {
    cells_lo = std::min(cells, div_up(per_channel - static_cast<std::int64_t>(cur.current), traffic_per_cell));
  }
  std::int64_t n_mid = cells_per_channel == 0 ? 0 : (cells - cells_lo) / cells_per_channel;
  std::int64_t cells_hi = cells_per_channel == 0 ? 0 : (cells - cells_lo) % cells_per_channel;
  std::int64_t n = (cells_lo != 0 ? 1 : 0) + n_mid + (cells_hi != 0 ? 1 : 0);
  if (cur.max_channels < cur.channel + n) {  // "Overflowed available channels"
    // Never below 0 on NCCL's paths (the last channel takes everything as "lo"); kept so for any cursor.
    n_mid = std::max<std::int64_t>(0, cur.max_channels - cur.channel - 2);
    cells_per_channel = (cells - cells_lo) / (n_mid + 1);
    cells_hi = cells_per_channel + (cells - cells_lo) % (n_mid + 1);
  }
  if (cells_hi == 0 && n_mid != 0) {
    cells_hi = cells_per_channel;
    n_mid -= 1;
  }
  if (cells_lo == 0) {  // "Least channel skipped. Make the next channel the new least."
    cur.channel += 1;
    if (n_mid == 0) {
      cells_lo = cells_hi;
      cells_hi = 0;
    } else {
      cells_lo = cells_per_channel;
      n_mid -= 1;
    }
  }
  std::int64_t count_lo = cells_lo * elems_per_cell;
  std::int64_t count_hi = cells_hi * elems_per_cell;
  (count_hi != 0 ? count_hi : count_lo) -= cells * elems_per_cell - count;
  n = (count_lo != 0 ? 1 : 0) + n_mid + (cells_hi != 0 ? 1 : 0);
  const CellSplit split{cur.channel, cur.channel + static_cast<int>(n) - 1};
  // "Update the current channel and vacant traffic budget."
  if (count_hi != 0) {
    cur.channel += static_cast<int>(n) - 1;
    cur.current = static_cast<std::uint64_t>(cells_hi * elems_per_cell * traffic_per_elem);
  } else if (n_mid != 0) {
    cur.channel += static_cast<int>(n);
    cur.current = 0;
  } else {
    cur.current += static_cast<std::uint64_t>(cells_lo * elems_per_cell * traffic_per_elem);
  }
  if (static_cast<std::int64_t>(cur.current) >= per_channel && cur.channel + 1 != cur.max_channels) {
    cur.channel += 1;
    cur.current = 0;
  }
  return split;
}

}  // namespace railcheck::plan
