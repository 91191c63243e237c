// The `stream` workload's store-only and multicast forms (docs/scenarios.md): what the scenario
// reader accepts and refuses, the programs build_programs makes of them, and two timed runs each
// (configs/scenarios/stream_store.yaml, stream_multicast.yaml):
//   - a store-only stream on one SM with stages=1 ends later than with stages=4 (the issuer's
//     wait_group bound of stages-1 outstanding stores is real);
//   - a multicast stream of N tiles on a cluster of 2 reads N tiles' bytes from the L2 but
//     delivers 2N into shared memory (summary bytes_loaded vs bytes_delivered);
//   - two back-to-back multicasts of one cluster are spaced by the cluster's multicast
//     occupancy, and one SM's by its multicasts in flight, while plain loads are not
//     (ArchConfig::cluster).
// Each timed run happens in a child process (tests/run_in_child.h).
#define BOOST_TEST_MODULE stream_workloads
#include <boost/test/unit_test.hpp>

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tma/config/arch_config_yaml.h"
#include "run_in_child.h"
#include "tma/scenario/scenario.h"
#include "tma/scenario/scenario_runner.h"
#include "tma/scenario/workload.h"
#include "tma/config/yaml_reader.h"

#include "shipped_configs.h"

using namespace tma;

// SystemC's library wants an sc_main; Boost.Test provides main.
int sc_main(int, char**) { return 0; }

namespace {

using test::scenario;
using test::h100;

// The field a YamlError names, or "" when the scenario loads.
std::string error_field(const std::string& name, const std::vector<std::string>& sets) {
  try {
    scenario(name, sets);
  } catch (const YamlError& e) {
    return e.field();
  }
  return "";
}

using test::Result;

Result run_in_child(const Scenario& s, const ArchConfig& arch = h100()) { return test::run_in_child(s, arch); }

constexpr uint64_t kStoreTileBytes = 32 * 64 * 4;      // stream_store: 32x64 f32
constexpr uint64_t kMulticastTileBytes = 64 * 64 * 2;  // stream_multicast: 64x64 bf16

}  // namespace

BOOST_AUTO_TEST_CASE(reader_accepts_store_only_and_multicast) {
  const Scenario st = scenario("stream_store");
  BOOST_TEST(st.workload.load.empty());
  BOOST_TEST(st.workload.store == "C_tile");
  BOOST_TEST(!st.workload.multicast);
  const Scenario mc = scenario("stream_multicast");
  BOOST_TEST(mc.workload.multicast);
  BOOST_TEST(!mc.workload.multicast_rotate);
  BOOST_TEST(scenario("stream_multicast", {"workload.multicast_issuer=rotate"}).workload.multicast_rotate);
}

BOOST_AUTO_TEST_CASE(reader_refuses_with_the_field_named) {
  // Neither load nor store.
  BOOST_TEST(error_field("stream_tiles", {"workload.load=~"}) == "workload.load");
  // A descriptor lives in a kernel parameter or in global memory, nowhere else.
  BOOST_TEST(error_field("stream_tiles", {"descriptors.T_tile.location=constant"}) == "descriptors.T_tile.location");
  BOOST_TEST(!scenario("stream_tiles", {"descriptors.T_tile.location=global"}).descriptors.at("T_tile").kernel_param);
  BOOST_TEST(scenario("stream_tiles").descriptors.at("T_tile").kernel_param);
  // Multicast needs clusters, a load, and no store; the issuer is first or rotate, with multicast only.
  BOOST_TEST(error_field("stream_multicast", {"cluster_size=1"}) == "workload.multicast");
  BOOST_TEST(error_field("stream_store", {"cluster_size=2", "workload.multicast=true"}) == "workload.multicast");
  BOOST_TEST(error_field("stream_multicast", {"workload.store=T_tile"}) == "workload.store");
  BOOST_TEST(error_field("stream_multicast", {"workload.multicast_issuer=last"}) == "workload.multicast_issuer");
  BOOST_TEST(error_field("stream_multicast", {"workload.multicast=false", "workload.multicast_issuer=first"}) ==
             "workload.multicast_issuer");
  // shared_tiles (the plain counterpart) needs clusters and a load, and excludes multicast and stores.
  BOOST_TEST(error_field("stream_multicast", {"workload.shared_tiles=true"}) == "workload.shared_tiles");
  BOOST_TEST(error_field("stream_tiles", {"workload.shared_tiles=true"}) == "workload.shared_tiles");
  BOOST_TEST(error_field("stream_multicast", {"workload.multicast=false", "workload.shared_tiles=true",
                                              "workload.store=T_tile"}) == "workload.store");
  // A reduction still needs its descriptor.
  BOOST_TEST(error_field("stream_store", {"workload.reduce=mul"}) == "workload.reduce");
}

BOOST_AUTO_TEST_CASE(store_only_program) {
  for (const char* reduce : {"", "add"}) {
    std::vector<std::string> sets = {"workload.stages=3"};
    if (*reduce) sets.push_back(std::string("workload.reduce=") + reduce);
    const Scenario s = scenario("stream_store", sets);
    const auto progs = build_programs(s, h100());
    std::set<std::pair<int32_t, int32_t>> tiles;
    for (const SmProgram& p : progs) {
      BOOST_TEST(p.steps.size() == 16u);  // max_tiles_per_sm
      for (size_t i = 0; i < p.steps.size(); ++i) {
        const Step& st = p.steps[i];
        BOOST_TEST(st.loads.empty());
        BOOST_TEST(st.expected_completions == 0u);
        BOOST_TEST(st.bulk_wait_pending == 2u);  // stages - 1
        BOOST_REQUIRE(st.after.size() == 1u);
        BOOST_TEST((st.after[0].cmd.op.kind == (*reduce ? OpKind::reduce : OpKind::store)));
        BOOST_TEST(st.after[0].cmd.op.smem_addr == (i % 3) * 8192);
        tiles.emplace(st.after[0].cmd.op.coords[0], st.after[0].cmd.op.coords[1]);
      }
    }
    BOOST_TEST(tiles.size() == 8u * 16u);  // every SM its own tiles
  }
  // A stream that loads has no wait_group bound (its behaviour is unchanged).
  for (const SmProgram& p : build_programs(scenario("stream_reduce", {"sms=2"}), h100()))
    for (const Step& st : p.steps) BOOST_TEST(st.bulk_wait_pending == kNoBulkWait);
}

BOOST_AUTO_TEST_CASE(multicast_program) {
  for (uint32_t cs : {2u, 4u})
    for (const char* issuer : {"first", "rotate"})
      for (const char* order : {"row_major", "column_major"}) {
        const Scenario s = scenario("stream_multicast", {"cluster_size=" + std::to_string(cs),
                                                         std::string("workload.multicast_issuer=") + issuer,
                                                         std::string("workload.tile_order=") + order});
        const bool rotate = std::string(issuer) == "rotate";
        const auto progs = build_programs(s, h100());
        std::set<std::tuple<int32_t, int32_t>> tiles;
        uint64_t loads = 0;
        for (uint32_t sm = 0; sm < s.sms; ++sm) {
          const SmProgram& p = progs[sm];
          const SmProgram& first = progs[sm - sm % cs];
          BOOST_TEST(p.steps.size() == 16u);  // max_tiles_per_sm caps the cluster
          for (size_t i = 0; i < p.steps.size(); ++i) {
            const Step& st = p.steps[i];
            BOOST_TEST(st.expected_completions == 1u);
            const uint32_t owner = rotate ? static_cast<uint32_t>(i % cs) : 0;
            BOOST_TEST(st.loads.size() == (sm % cs == owner ? 1u : 0u));
            for (const IssueOp& op : st.loads) {
              ++loads;
              BOOST_TEST(op.cmd.cta_mask == (1u << cs) - 1);
              tiles.emplace(op.cmd.op.coords[0], op.cmd.op.coords[1]);
            }
            // Every CTA of the cluster runs the same tiles into the same stages.
            BOOST_TEST(first.steps[i].expected_completions == st.expected_completions);
          }
        }
        BOOST_TEST(loads == (s.sms / cs) * 16u);  // each tile loaded once per cluster
        BOOST_TEST(tiles.size() == loads);        // and by one cluster only
      }
}

BOOST_AUTO_TEST_CASE(store_only_wait_group_bound_is_real) {
  const Result one = run_in_child(scenario("stream_store", {"sms=1", "workload.stages=1"}));
  const Result four = run_in_child(scenario("stream_store", {"sms=1", "workload.stages=4"}));
  for (const Result* r : {&one, &four}) {
    BOOST_TEST(r->stores == 16u);
    BOOST_TEST(r->loads == 0u);
    BOOST_TEST(r->bytes_stored == 16 * kStoreTileBytes);
    BOOST_TEST(r->scoreboard_checked == 16u);
    BOOST_TEST(r->scoreboard_mismatches == 0u);
    BOOST_TEST(r->invariant_checks > 0u);
    BOOST_TEST(r->invariant_violations == 0u);
  }
  // Four overlap: the SM's write link into the L2 sets the pace. One store at a time: each waits
  // for the last, so every tile after the first also pays a store's fixed part (setup, descriptor,
  // acknowledgement: about 50 cycles, tests/calibration/h200/store_reduce.csv).
  const uint64_t link_cycles = 16 * kStoreTileBytes / h100().l2.sm_write_bytes_per_cycle;
  BOOST_TEST(four.cycles >= link_cycles, "stages=4: " << four.cycles << " cycles, link: " << link_cycles);
  BOOST_TEST(one.cycles > four.cycles + 15 * 30, "stages=1: " << one.cycles << " cycles, stages=4: " << four.cycles);
  // The reduce-only form is checked by the scoreboard as well.
  const Result red = run_in_child(scenario("stream_store", {"sms=2", "workload.reduce=add"}));
  BOOST_TEST(red.reductions == 32u);
  BOOST_TEST(red.scoreboard_checked == 32u);
  BOOST_TEST(red.scoreboard_mismatches == 0u);
  BOOST_TEST(red.invariant_violations == 0u);
}

BOOST_AUTO_TEST_CASE(multicast_reads_once_delivers_to_each_cta) {
  const uint64_t n = 16;  // one cluster of 2 takes max_tiles_per_sm tiles
  for (const char* issuer : {"first", "rotate"}) {
    const Result r = run_in_child(
        scenario("stream_multicast", {"sms=2", "cluster_size=2", std::string("workload.multicast_issuer=") + issuer}));
    BOOST_TEST(r.loads == n);
    BOOST_TEST(r.bytes_loaded == n * kMulticastTileBytes);         // unique: read once
    BOOST_TEST(r.bytes_requested == n * kMulticastTileBytes);      // what the splitters asked the L2 for
    BOOST_TEST(r.bytes_delivered == 2 * n * kMulticastTileBytes);  // into both CTAs' shared memory
    BOOST_TEST(r.scoreboard_checked == n);
    BOOST_TEST(r.scoreboard_mismatches == 0u);
    BOOST_TEST(r.invariant_violations == 0u);
  }
}

// Two tiles per cluster, both stages free at the start: the issuer sends the two loads at once.
// `occupancy` cycles of the cluster's resource per multicast (its byte term one cycle), at most
// `per_sm` multicasts in flight per SM.
namespace {
Result two_loads(const std::vector<std::string>& sets, uint32_t occupancy, uint32_t per_sm) {
  ArchConfig arch = h100();
  arch.cluster.multicast_occupancy_cycles = occupancy;
  arch.cluster.multicast_bytes_per_cycle = 1e6;
  arch.cluster.multicast_inflight_per_sm = per_sm;
  std::vector<std::string> all = {"sms=2", "cluster_size=2", "workload.max_tiles_per_sm=2", "workload.stages=2"};
  all.insert(all.end(), sets.begin(), sets.end());
  const Result r = run_in_child(scenario("stream_multicast", all), arch);
  BOOST_TEST(r.scoreboard_mismatches == 0u);
  BOOST_TEST(r.invariant_violations == 0u);
  return r;
}
}  // namespace

BOOST_AUTO_TEST_CASE(multicasts_of_a_cluster_are_spaced_by_the_occupancy) {
  // Occupancies far beyond a load's latency, multiples of the bandwidth window and the quantum so
  // that nothing else moves: the second multicast starts (and the run ends) exactly `occupancy`
  // after the first starts, whichever CTA issues it.
  const uint32_t o1 = 3072, o2 = 6144;
  for (const char* issuer : {"first", "rotate"}) {
    const std::string set = std::string("workload.multicast_issuer=") + issuer;
    const Result a = two_loads({set}, o1, 1024), b = two_loads({set}, o2, 1024);
    BOOST_TEST(a.loads == 2u);
    BOOST_TEST(b.cycles - a.cycles == o2 - o1, issuer << ": " << a.cycles << " and " << b.cycles << " cycles");
    BOOST_TEST(a.cycles > o1);
  }
  // Plain loads of the same tiles (every CTA loads each itself) never wait for it.
  const std::vector<std::string> plain = {"workload.multicast=false", "workload.shared_tiles=true"};
  const Result pa = two_loads(plain, o1, 1), pb = two_loads(plain, o2, 1);
  BOOST_TEST(pa.loads == 4u);
  BOOST_TEST(pa.cycles == pb.cycles);
  BOOST_TEST(pa.cycles < o1);
  // The resource is per cluster: two clusters run side by side, not one after the other.
  const Result two = two_loads({"sms=4"}, o2, 1024), one = two_loads({}, o2, 1024);
  BOOST_TEST(two.loads == 4u);
  BOOST_TEST(two.cycles < one.cycles + o2 / 2);
}

BOOST_AUTO_TEST_CASE(multicasts_of_an_sm_wait_for_its_previous_one) {
  // No occupancy: one multicast in flight per SM makes the issuer's second load wait for its first
  // (a cold load's latency, hundreds of cycles); with a CTA issuing each, they overlap again.
  const Result serial = two_loads({}, 0, 1), overlapped = two_loads({}, 0, 2);
  BOOST_TEST(serial.cycles > overlapped.cycles + 300, serial.cycles << " vs " << overlapped.cycles << " cycles");
  const std::string rotate = "workload.multicast_issuer=rotate";
  BOOST_TEST(two_loads({rotate}, 0, 1).cycles == two_loads({rotate}, 0, 2).cycles);
}
