// The order in which a kernel's CTAs visit the output tiles of a GEMM-like problem (tiles_m x
// tiles_n), as real kernels schedule them (docs/scenarios.md, "Tile schedules"):
//   - raster: which tile index runs fastest (n: row-major, the default; m: column-major);
//   - Triton's grouped ordering (group_size_m: G rows of tiles at a time, M fastest inside);
//   - CUTLASS's PersistentTileSchedulerSm90 swizzle (strips of 1, 2, 4 or 8 tiles along the
//     non-raster dimension, with CUTLASS's rules for the swizzle size and the raster order);
// and whether the grid is persistent (one CTA per SM walks positions b, b + grid, ...) or one
// CTA per tile launched in waves.
#pragma once

#include <cstdint>
#include <vector>

namespace tma {

enum class Raster : uint8_t {
  n,          // n runs fastest (row-major; CUTLASS RasterOrder::AlongN)
  m,          // m runs fastest (column-major; CUTLASS RasterOrder::AlongM)
  heuristic,  // CUTLASS's RasterOrderOptions::Heuristic: along M when tiles_n > tiles_m, else along N
};

struct TileSchedule {
  Raster raster = Raster::n;
  uint32_t group_size_m = 0;  // Triton's GROUP_SIZE_M; 0: no grouping
  uint32_t swizzle = 0;       // CUTLASS's max_swizzle_size (1, 2, 4, 8); 0: not CUTLASS's scheduler
  bool persistent = true;     // false: one CTA per tile, launched in waves
};

struct OutputTile {
  uint64_t m = 0, n = 0;
  // A position of CUTLASS's swizzled order that lies past the problem: CUTLASS rounds both tile
  // counts up to a multiple of the swizzle and its CTAs visit these positions too (their loads
  // fall outside the tensors). The model keeps their place in the order but runs nothing there.
  bool padding = false;
};

// The tiles in the order the schedule visits them: entry t is linear work index t (CTA t of a
// non-persistent grid; the t-th tile a persistent grid hands out, CTA t % grid taking it).
std::vector<OutputTile> schedule_tiles(uint64_t tiles_m, uint64_t tiles_n, const TileSchedule& s);

// CUTLASS's choices (tile_scheduler_params.h): the swizzle actually used for a problem of
// tiles_m x tiles_n tiles (get_log_swizzle_size: 8 needs both counts >= 6, 4 >= 3, 2 >= 2), and
// the raster order of the heuristic on the counts rounded up to that swizzle.
uint32_t cutlass_swizzle_size(uint64_t tiles_m, uint64_t tiles_n, uint32_t max_swizzle);
Raster cutlass_raster(uint64_t tiles_m, uint64_t tiles_n, uint32_t swizzle, Raster requested);

}  // namespace tma
