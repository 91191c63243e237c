#include "tma/scenario/tile_schedule.h"

#include <algorithm>

namespace tma {

namespace {

uint64_t round_up(uint64_t a, uint64_t b) { return (a + b - 1) / b * b; }

}  // namespace

uint32_t cutlass_swizzle_size(uint64_t tiles_m, uint64_t tiles_n, uint32_t max_swizzle) {
  const uint64_t smaller = std::min(tiles_m, tiles_n);
  if (max_swizzle >= 8 && smaller >= 6) return 8;
  if (max_swizzle >= 4 && smaller >= 3) return 4;
  if (max_swizzle >= 2 && smaller >= 2) return 2;
  return 1;
}

Raster cutlass_raster(uint64_t tiles_m, uint64_t tiles_n, uint32_t swizzle, Raster requested) {
  if (requested != Raster::heuristic) return requested;
  // CUTLASS decides on the counts rounded up to the swizzle.
  return round_up(tiles_n, swizzle) > round_up(tiles_m, swizzle) ? Raster::m : Raster::n;
}

std::vector<OutputTile> schedule_tiles(uint64_t tiles_m, uint64_t tiles_n, const TileSchedule& s) {
  std::vector<OutputTile> out;
  if (s.group_size_m) {
    // Triton's matmul tutorial: G rows of tiles at a time, M fastest inside a group; the last
    // group has the rows that are left.
    const uint64_t g = s.group_size_m, in_group = g * tiles_n;
    out.reserve(tiles_m * tiles_n);
    for (uint64_t t = 0; t < tiles_m * tiles_n; ++t) {
      const uint64_t first_m = t / in_group * g;
      const uint64_t size = std::min(tiles_m - first_m, g);
      out.push_back({first_m + t % in_group % size, t % in_group / size, false});
    }
    return out;
  }
  // CUTLASS's PersistentTileSchedulerSm90::get_work_idx_m_and_n (clusters of one CTA): strips of
  // `sw` tiles along the minor (non-raster) dimension, walked along the major one. A plain
  // raster is the same with sw = 1.
  const uint32_t sw = s.swizzle ? cutlass_swizzle_size(tiles_m, tiles_n, s.swizzle) : 1;
  const uint64_t pm = round_up(tiles_m, sw), pn = round_up(tiles_n, sw);
  const Raster r = cutlass_raster(tiles_m, tiles_n, sw, s.raster);
  const uint64_t major_count = r == Raster::n ? pn : pm;
  out.reserve(pm * pn);
  for (uint64_t t = 0; t < pm * pn; ++t) {
    const uint64_t offset = t % sw, extra = t / sw;
    const uint64_t minor = extra / major_count * sw + offset, major = extra % major_count;
    const uint64_t m = r == Raster::n ? minor : major, n = r == Raster::n ? major : minor;
    out.push_back({m, n, m >= tiles_m || n >= tiles_n});
  }
  return out;
}

}  // namespace tma
