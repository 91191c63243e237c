// GEMM tile schedules (tb/tile_schedule.h, docs/scenarios.md "Tile schedules"):
//   - the exact tile sequences of each order on small problems (4 x 3 tiles): raster n and m,
//     Triton's grouped ordering (checked against the tutorial's formula, written out here, on
//     every problem up to 12 x 12 tiles and every group size), CUTLASS's swizzle (checked against
//     a transcription of PersistentTileSchedulerSm90::get_work_idx_m_and_n with its cluster
//     divisors, and CUTLASS's rules for the swizzle size and the heuristic raster order);
//   - how build_launch deals them: a persistent grid (CTA b takes places b, b + grid, ...;
//     CUTLASS's padding keeps its place but runs nothing) and a grid of one CTA per tile (the
//     first wave on SMs 0.., the rest to the first SM free);
//   - what the scenario reader refuses;
//   - timed: one CTA per tile ends later than a persistent grid of the same tiles (a new CTA
//     cannot load its first stage before the last one on its SM has ended) and runs every tile
//     exactly once.
#define BOOST_TEST_MODULE schedulers
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tma/config/arch_config_yaml.h"
#include "run_in_child.h"
#include "tma/scenario/scenario.h"
#include "tma/scenario/tile_schedule.h"
#include "tma/scenario/workload.h"
#include "tma/config/yaml_reader.h"

#include "shipped_configs.h"

using namespace tma;

// SystemC's library wants an sc_main; Boost.Test provides main.
int sc_main(int, char**) { return 0; }

namespace {

using test::scenario;
using test::h100;

using MN = std::pair<uint64_t, uint64_t>;
// The sequence, padding as (-1, -1) written as (99, 99) for readable expectations.
std::vector<MN> seq(uint64_t tm, uint64_t tn, TileSchedule s) {
  std::vector<MN> out;
  for (const OutputTile& t : schedule_tiles(tm, tn, s)) out.push_back(t.padding ? MN{99, 99} : MN{t.m, t.n});
  return out;
}

TileSchedule raster(Raster r) {
  TileSchedule s;
  s.raster = r;
  return s;
}
TileSchedule grouped(uint32_t g) {
  TileSchedule s;
  s.group_size_m = g;
  return s;
}
TileSchedule swizzled(uint32_t sw, Raster r = Raster::heuristic) {
  TileSchedule s;
  s.swizzle = sw;
  s.raster = r;
  return s;
}

constexpr MN P{99, 99};  // CUTLASS's padding

// gemm_bf16 (128 x 128 output tiles, one 64-wide K step) on a 4 x 3 tile problem.
Scenario gemm_4x3(const std::vector<std::string>& more) {
  std::vector<std::string> sets = {"sms=4", "workload.m=512", "workload.n=384", "workload.k=64"};
  sets.insert(sets.end(), more.begin(), more.end());
  return scenario("gemm_bf16", sets);
}

// The output tiles a CTA computes, read off its A and B loads.
std::vector<MN> tiles_of(const CtaProgram& p) {
  std::vector<MN> out;
  for (const Step& st : p.steps)
    out.emplace_back(static_cast<uint64_t>(st.loads.at(0).cmd.op.coords[1]) / 128,
                     static_cast<uint64_t>(st.loads.at(1).cmd.op.coords[1]) / 128);
  return out;
}

std::string error_field(const std::vector<std::string>& sets, const std::string& name = "gemm_bf16") {
  try {
    scenario(name, sets);
  } catch (const YamlError& e) {
    return e.field();
  }
  return "";
}

}  // namespace

BOOST_AUTO_TEST_CASE(raster_orders) {
  const std::vector<MN> n = {{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2},
                             {2, 0}, {2, 1}, {2, 2}, {3, 0}, {3, 1}, {3, 2}};
  const std::vector<MN> m = {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {0, 1}, {1, 1},
                             {2, 1}, {3, 1}, {0, 2}, {1, 2}, {2, 2}, {3, 2}};
  BOOST_TEST(seq(4, 3, raster(Raster::n)) == n);
  BOOST_TEST(seq(4, 3, raster(Raster::m)) == m);
}

BOOST_AUTO_TEST_CASE(triton_grouped_order) {
  // G = 2: two rows of tiles at a time, M fastest inside the group.
  const std::vector<MN> g2 = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 2},
                              {2, 0}, {3, 0}, {2, 1}, {3, 1}, {2, 2}, {3, 2}};
  BOOST_TEST(seq(4, 3, grouped(2)) == g2);
  // G = 3: the last group has the one row left.
  const std::vector<MN> g3 = {{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1}, {2, 1},
                              {0, 2}, {1, 2}, {2, 2}, {3, 0}, {3, 1}, {3, 2}};
  BOOST_TEST(seq(4, 3, grouped(3)) == g3);
  // G = 1 is row-major; G >= tiles_m is column-major.
  BOOST_TEST(seq(4, 3, grouped(1)) == seq(4, 3, raster(Raster::n)));
  BOOST_TEST(seq(4, 3, grouped(4)) == seq(4, 3, raster(Raster::m)));
  BOOST_TEST(seq(4, 3, grouped(9)) == seq(4, 3, raster(Raster::m)));
  // Triton's 03-matrix-multiplication tutorial, as written there (pid -> pid_m, pid_n).
  for (uint64_t num_pid_m = 1; num_pid_m <= 12; ++num_pid_m)
    for (uint64_t num_pid_n = 1; num_pid_n <= 12; ++num_pid_n)
      for (uint32_t GROUP_SIZE_M = 1; GROUP_SIZE_M <= 13; ++GROUP_SIZE_M) {
        std::vector<MN> triton;
        for (uint64_t pid = 0; pid < num_pid_m * num_pid_n; ++pid) {
          const uint64_t num_pid_in_group = GROUP_SIZE_M * num_pid_n;
          const uint64_t group_id = pid / num_pid_in_group;
          const uint64_t first_pid_m = group_id * GROUP_SIZE_M;
          const uint64_t group_size_m = std::min<uint64_t>(num_pid_m - first_pid_m, GROUP_SIZE_M);
          const uint64_t pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m);
          const uint64_t pid_n = (pid % num_pid_in_group) / group_size_m;
          triton.emplace_back(pid_m, pid_n);
        }
        BOOST_TEST(seq(num_pid_m, num_pid_n, grouped(GROUP_SIZE_M)) == triton,
                   num_pid_m << " x " << num_pid_n << " G=" << GROUP_SIZE_M);
      }
}

BOOST_AUTO_TEST_CASE(cutlass_swizzle_size_and_raster_rules) {
  // get_log_swizzle_size: 8 needs min(tiles) >= 6, 4 needs >= 3, 2 needs >= 2.
  BOOST_TEST(cutlass_swizzle_size(4, 3, 8) == 4u);
  BOOST_TEST(cutlass_swizzle_size(6, 7, 8) == 8u);
  BOOST_TEST(cutlass_swizzle_size(5, 7, 8) == 4u);
  BOOST_TEST(cutlass_swizzle_size(2, 9, 8) == 2u);
  BOOST_TEST(cutlass_swizzle_size(1, 9, 8) == 1u);
  BOOST_TEST(cutlass_swizzle_size(9, 9, 2) == 2u);
  BOOST_TEST(cutlass_swizzle_size(9, 9, 1) == 1u);
  // The heuristic: along M when tiles_n > tiles_m after rounding both up to the swizzle.
  BOOST_TEST((cutlass_raster(4, 3, 2, Raster::heuristic) == Raster::n));  // 4 x 4 after rounding
  BOOST_TEST((cutlass_raster(3, 4, 1, Raster::heuristic) == Raster::m));
  BOOST_TEST((cutlass_raster(3, 4, 4, Raster::heuristic) == Raster::n));  // 4 x 4 after rounding
  BOOST_TEST((cutlass_raster(2, 5, 2, Raster::heuristic) == Raster::m));
  BOOST_TEST((cutlass_raster(2, 5, 2, Raster::n) == Raster::n));          // asked for: kept
}

BOOST_AUTO_TEST_CASE(cutlass_swizzled_order) {
  // Swizzle 2 on 4 x 3 tiles: both counts rounded up to 4, along N (the heuristic): strips of two
  // M rows walked along N; column 3 is padding.
  const std::vector<MN> s2 = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 2}, P, P,
                              {2, 0}, {3, 0}, {2, 1}, {3, 1}, {2, 2}, {3, 2}, P, P};
  BOOST_TEST(seq(4, 3, swizzled(2)) == s2);
  // Swizzle 4: one strip of the four rows; 8 asked for is 4 here (min(tiles) < 6).
  const std::vector<MN> s4 = {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {0, 1}, {1, 1}, {2, 1}, {3, 1},
                              {0, 2}, {1, 2}, {2, 2}, {3, 2}, P,      P,      P,      P};
  BOOST_TEST(seq(4, 3, swizzled(4)) == s4);
  BOOST_TEST(seq(4, 3, swizzled(8)) == s4);
  // Swizzle 1 is the raster itself (no padding).
  BOOST_TEST(seq(4, 3, swizzled(1, Raster::m)) == seq(4, 3, raster(Raster::m)));
  BOOST_TEST(seq(4, 3, swizzled(1, Raster::n)) == seq(4, 3, raster(Raster::n)));
  // Along M (2 x 5 tiles, the heuristic's choice): strips of two N columns walked along M.
  const std::vector<MN> m2 = {{0, 0}, {0, 1}, {1, 0}, {1, 1}, {0, 2}, {0, 3},
                              {1, 2}, {1, 3}, {0, 4}, P,      {1, 4}, P};
  BOOST_TEST(seq(2, 5, swizzled(2)) == m2);
  // Against CUTLASS's get_work_idx_m_and_n as written (clusters of 1 x 1: the cluster divisors
  // are 1, the cluster offsets 0), on every problem up to 10 x 10 tiles.
  for (uint64_t tm = 1; tm <= 10; ++tm)
    for (uint64_t tn = 1; tn <= 10; ++tn)
      for (uint32_t max_swizzle : {1u, 2u, 4u, 8u})
        for (Raster ro : {Raster::heuristic, Raster::m, Raster::n}) {
          const uint32_t sw = cutlass_swizzle_size(tm, tn, max_swizzle);
          int32_t log_swizzle_size = 0;
          while ((1u << log_swizzle_size) < sw) ++log_swizzle_size;
          const uint64_t problem_blocks_m = (tm + sw - 1) / sw * sw, problem_blocks_n = (tn + sw - 1) / sw * sw;
          const Raster raster_order = cutlass_raster(tm, tn, sw, ro);
          const uint64_t cluster_shape_major = 1, cluster_shape_minor = 1;
          const uint64_t cluster_blk_major = raster_order == Raster::n ? problem_blocks_n : problem_blocks_m;
          std::vector<MN> cutlass;
          for (uint64_t blk_per_grid_dim = 0; blk_per_grid_dim < problem_blocks_m * problem_blocks_n; ++blk_per_grid_dim) {
            const uint64_t cluster_id = blk_per_grid_dim / cluster_shape_major;
            const uint64_t cluster_major_offset = blk_per_grid_dim % cluster_shape_major;
            const uint64_t cluster_minor_offset = 0;
            const uint64_t offset = cluster_id & ((1 << log_swizzle_size) - 1);
            const uint64_t extra = cluster_id >> log_swizzle_size;
            const uint64_t cluster_idx_minor_div_swizzle = extra / cluster_blk_major;
            const uint64_t cluster_idx_major = extra % cluster_blk_major;
            const uint64_t cluster_idx_minor = cluster_idx_minor_div_swizzle * (1 << log_swizzle_size) + offset;
            const uint64_t minor_work_idx = cluster_idx_minor * cluster_shape_minor + cluster_minor_offset;
            const uint64_t major_work_idx = cluster_idx_major * cluster_shape_major + cluster_major_offset;
            const uint64_t m = raster_order == Raster::n ? minor_work_idx : major_work_idx;
            const uint64_t n = raster_order == Raster::n ? major_work_idx : minor_work_idx;
            cutlass.push_back(m < tm && n < tn ? MN{m, n} : P);
          }
          BOOST_TEST(seq(tm, tn, swizzled(max_swizzle, ro)) == cutlass, tm << " x " << tn << " swizzle " << max_swizzle);
        }
}

BOOST_AUTO_TEST_CASE(persistent_grid_deals_places_round_robin) {
  const ArchConfig arch = h100();
  // Row-major on 4 SMs: CTA b takes places b, b + 4, b + 8.
  const Launch row = build_launch(gemm_4x3({}), arch);
  BOOST_REQUIRE(row.ctas.size() == 4u);
  BOOST_TEST((row.sm == std::vector<int32_t>{0, 1, 2, 3}));
  BOOST_TEST((tiles_of(row.ctas[0]) == std::vector<MN>{{0, 0}, {1, 1}, {2, 2}}));
  BOOST_TEST((tiles_of(row.ctas[1]) == std::vector<MN>{{0, 1}, {1, 2}, {3, 0}}));
  BOOST_TEST((tiles_of(row.ctas[3]) == std::vector<MN>{{1, 0}, {2, 1}, {3, 2}}));
  // tile_order: column_major is raster m's older spelling.
  const Launch col = build_launch(gemm_4x3({"workload.tile_order=column_major"}), arch);
  const Launch col2 = build_launch(gemm_4x3({"workload.schedule={raster: m}"}), arch);
  BOOST_TEST((tiles_of(col.ctas[0]) == std::vector<MN>{{0, 0}, {0, 1}, {0, 2}}));
  for (size_t c = 0; c < 4; ++c) BOOST_TEST(tiles_of(col.ctas[c]) == tiles_of(col2.ctas[c]));
  // Triton G = 2 on 4 SMs: places of {(0,0),(1,0),(0,1),(1,1),(0,2),(1,2),(2,0),...}.
  const Launch tri = build_launch(gemm_4x3({"workload.schedule={group_size_m: 2}"}), arch);
  BOOST_TEST((tiles_of(tri.ctas[0]) == std::vector<MN>{{0, 0}, {0, 2}, {2, 1}}));
  BOOST_TEST((tiles_of(tri.ctas[2]) == std::vector<MN>{{0, 1}, {2, 0}, {2, 2}}));
  BOOST_TEST((tiles_of(tri.ctas[3]) == std::vector<MN>{{1, 1}, {3, 0}, {3, 2}}));
  // CUTLASS swizzle 2: the padding keeps its place (places 6, 7, 14, 15 go to CTAs 2 and 3, which
  // run nothing there).
  const Launch cut = build_launch(gemm_4x3({"workload.schedule={swizzle: 2}"}), arch);
  BOOST_TEST((tiles_of(cut.ctas[0]) == std::vector<MN>{{0, 0}, {0, 2}, {2, 0}, {2, 2}}));
  BOOST_TEST((tiles_of(cut.ctas[1]) == std::vector<MN>{{1, 0}, {1, 2}, {3, 0}, {3, 2}}));
  BOOST_TEST((tiles_of(cut.ctas[2]) == std::vector<MN>{{0, 1}, {2, 1}}));
  BOOST_TEST((tiles_of(cut.ctas[3]) == std::vector<MN>{{1, 1}, {3, 1}}));
  // max_tiles_per_sm caps each CTA.
  const Launch cap = build_launch(gemm_4x3({"workload.max_tiles_per_sm=2"}), arch);
  for (const CtaProgram& c : cap.ctas) BOOST_TEST(c.steps.size() == 2u);
  // Every CTA prefetches the descriptors first (prefetch_descriptors: true).
  for (const CtaProgram& c : row.ctas) BOOST_TEST(c.prologue.size() == 2u);
}

BOOST_AUTO_TEST_CASE(non_persistent_grid_is_one_cta_per_tile) {
  const ArchConfig arch = h100();
  const Launch w = build_launch(gemm_4x3({"workload.schedule={persistent: false, swizzle: 2}"}), arch);
  // The 12 real tiles in CUTLASS's order (padding dropped), one CTA each, each with its prologue.
  std::vector<MN> order;
  for (const CtaProgram& c : w.ctas) {
    BOOST_TEST(c.prologue.size() == 2u);
    for (const MN& t : tiles_of(c)) order.push_back(t);
  }
  std::vector<MN> expected;
  for (const MN& t : seq(4, 3, swizzled(2)))
    if (t != P) expected.push_back(t);
  BOOST_TEST(order == expected);
  BOOST_REQUIRE(w.ctas.size() == 12u);
  // The first wave on SMs 0-3, every later CTA to the first SM free.
  for (size_t i = 0; i < w.sm.size(); ++i) BOOST_TEST(w.sm[i] == (i < 4 ? static_cast<int32_t>(i) : kAnySm));
  // With clusters the waves are dealt statically: CTA e on SM e % sms.
  const Launch cl = build_launch(gemm_4x3({"cluster_size=2", "workload.schedule={persistent: false}"}), arch);
  for (size_t i = 0; i < cl.sm.size(); ++i) BOOST_TEST(cl.sm[i] == static_cast<int32_t>(i % 4));
  // max_tiles_per_sm caps the grid at that many tiles per SM.
  BOOST_TEST(build_launch(gemm_4x3({"workload.schedule={persistent: false}", "workload.max_tiles_per_sm=2"}), arch)
                 .ctas.size() == 8u);
  // sm_programs deals the CTAs any SM takes round robin after the first wave.
  const auto per_sm = sm_programs(w, 4);
  BOOST_TEST((tiles_of(per_sm[0]) == std::vector<MN>{expected[0], expected[4], expected[8]}));
}

BOOST_AUTO_TEST_CASE(reader_refuses_with_the_field_named) {
  BOOST_TEST(error_field({"workload.schedule={swizzle: 3}"}) == "workload.schedule.swizzle");
  BOOST_TEST(error_field({"workload.schedule={swizzle: 16}"}) == "workload.schedule.swizzle");
  BOOST_TEST(error_field({"workload.schedule={raster: k}"}) == "workload.schedule.raster");
  BOOST_TEST(error_field({"workload.schedule={group_size_m: 0}"}) == "workload.schedule.group_size_m");
  BOOST_TEST(error_field({"workload.schedule={group_size_m: 2, swizzle: 2}"}) == "workload.schedule.group_size_m");
  BOOST_TEST(error_field({"workload.schedule={group_size_m: 2, raster: n}"}) == "workload.schedule.group_size_m");
  BOOST_TEST(error_field({"workload.schedule={raster: m}", "workload.tile_order=row_major"}) ==
             "workload.schedule.raster");
  BOOST_TEST(error_field({"workload.schedule={order: m}"}) == "workload.schedule.order");
  BOOST_TEST(error_field({"workload.schedule=fast"}) == "workload.schedule");
  // Streams keep tile_order; a schedule block is a GEMM's or a convolution's.
  BOOST_TEST(error_field({"workload.schedule={raster: m}"}, "stream_tiles") == "workload.schedule");
  // What is accepted, and CUTLASS's heuristic as swizzle's default raster.
  BOOST_TEST(error_field({"workload.schedule={swizzle: 8, raster: m, persistent: false}"}).empty());
  BOOST_TEST((scenario("gemm_bf16", {"workload.schedule={swizzle: 4}"}).workload.schedule.raster == Raster::heuristic));
  BOOST_TEST((scenario("gemm_bf16").workload.schedule.raster == Raster::n));
  BOOST_TEST(scenario("conv_im2col", {"workload.schedule={group_size_m: 8}"}).workload.schedule.group_size_m == 8u);
}

BOOST_AUTO_TEST_CASE(waves_end_later_than_a_persistent_grid) {
  // 2 SMs, 8 tiles of one K step each, the math longer than a load: a persistent CTA loads its
  // next tile while it computes the last; a CTA per tile cannot load before the SM's last CTA
  // has ended, so each of the three later tiles of an SM adds at least a load's L2 round trip.
  const ArchConfig arch = h100();
  const std::vector<std::string> sets = {"sms=2", "workload.m=512", "workload.n=256", "workload.k=64",
                                         "workload.compute_cycles=2000"};
  auto with = [&](const std::string& more) {
    std::vector<std::string> all = sets;
    all.push_back(more);
    return scenario("gemm_bf16", all);
  };
  const test::Result persistent = test::run_in_child(with("workload.schedule={persistent: true}"), arch);
  const test::Result waves = test::run_in_child(with("workload.schedule={persistent: false}"), arch);
  for (const test::Result* r : {&persistent, &waves}) {
    BOOST_TEST(r->loads == 16u);
    BOOST_TEST(r->scoreboard_checked == 16u);
    BOOST_TEST(r->scoreboard_mismatches == 0u);
    BOOST_TEST(r->invariant_violations == 0u);
  }
  BOOST_TEST(persistent.ctas == 2u);
  BOOST_TEST(waves.ctas == 8u);
  BOOST_TEST(waves.ctas_of_sm[0] + waves.ctas_of_sm[1] == 8u);
  BOOST_TEST(waves.ctas_of_sm[0] == 4u);  // equal tiles: the SMs take turns
  BOOST_TEST(persistent.cycles >= 4 * 2000u);
  BOOST_TEST(waves.cycles > persistent.cycles + 3 * arch.l2.hit_latency,
             "waves " << waves.cycles << " cycles, persistent " << persistent.cycles);
}
