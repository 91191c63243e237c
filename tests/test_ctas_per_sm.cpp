// Several CTAs per SM (workload.ctas_per_sm, docs/scenarios.md "CTAs per SM"): each CTA its own
// producer and consumer over its own stage ring, the SM's one TMA unit serving them all,
// occupancy from shared memory, and grids in waves that fill every slot:
//   - occupancy: a stream CTA of 8 stages of 8 KB (65,664 bytes with its mbarriers, + 1,024
//     reserved) fits 3 times in the H100's 233,472 bytes: `auto` gives 3, and 4 is an error
//     naming workload.ctas_per_sm and the 3 that fit; a persistent grid of N per SM is N x sms
//     CTAs, CTA e on SM e % sms taking places e, e + grid, ...;
//   - overlap: on one SM, 16 tiles through one CTA of 1 stage (load, then 500 cycles of math,
//     then the next load) against the same tiles through 2 CTAs of 1 stage each: the two overlap,
//     so the SM takes less than the serial time, and no less than what one CTA's 8 steps of math
//     and the SM's link from the L2 bound it to;
//   - waves: a GEMM grid of 3 x the SMs, one CTA per tile, 1 CTA per SM, runs 3 waves, each
//     later CTA starting launch.cta_dispatch_ns after the one it replaces: with 1,024 cycles of
//     dispatch the run takes exactly 2 x 1,024 cycles more than with none, and with the H100's
//     224 ns (444 cycles) 2 x 444 more (the waves are otherwise the same: the memory system is
//     idle between them);
//   - set-up: 3 waves on one SM with workload.setup_cycles of 1,024 take exactly 3 x 1,024 cycles
//     more (each CTA issues its first load that long after it starts);
//   - issue: a stream on one SM whose producer takes workload.issue_cycles a step (silicon's
//     space.cu: 325-447 cycles, docs/calibration.md) issues its 16 tiles that far apart: with
//     20,000 cycles a step (each tile, from a warm L2, back long before the next is asked for) the run takes
//     exactly 15 x 10,000 cycles more than with 10,000, and with more cycles a step than a tile's
//     trip over the stages, small tiles stream at one per issue_cycles;
//   - handoff: with one stage every tile's consumer waits for its data and the producer for every
//     release but the first, so 16 tiles with workload.handoff_cycles of 2,000 take exactly
//     31 x 1,000 cycles more than with 1,000;
//   - fair issue: 4 CTAs of one SM, 16 tiles each, over a command queue of 2 entries, enter it in
//     turn, so they end together (silicon's CTAs of one SM end within 1%
//     of each other); in SystemC's wake-up order some CTAs would wait while others refilled it;
//   - warp schedulers: 3 CTAs of 2 warps put slots 0 and 2's producers on one scheduler and slot
//     1's on another, which then gets every other entry of a full queue and ends first (the mean
//     CTA ends near 0.89 of the run); with 1 warp a CTA they end together;
//   - a grid in waves with 2 CTAs per SM starts 2 x sms CTAs at once.
// Timed runs happen in child processes (SystemC elaborates once per process).
#define BOOST_TEST_MODULE ctas_per_sm
#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "tma/config/arch_config_yaml.h"
#include "tma/scenario/scenario.h"
#include "tma/scenario/scenario_runner.h"
#include "tma/scenario/workload.h"
#include "tma/config/yaml_reader.h"
#include "run_in_child.h"

#include "shipped_configs.h"

using namespace tma;

// SystemC's library wants an sc_main; Boost.Test provides main.
int sc_main(int, char**) { return 0; }

namespace {

using test::scenario;
using test::h100;

// What a timed run reports (plain data: it crosses a pipe).
struct Run {
  bool ok = false;
  uint64_t cycles = 0, loads = 0, bytes_loaded = 0, checked = 0, mismatches = 0, violations = 0;
  uint64_t ctas = 0, grid = 0, waves = 0, slots = 0, max_concurrent = 0;
  double mean_concurrent = 0;
  uint64_t sm0_ctas = 0, sm0_max_concurrent = 0;
  uint64_t consumer_cycles = 0;  // the CTAs' time, each until it ended
};

Run run(const Scenario& s, const ArchConfig& arch, const Launch* launch = nullptr) {
  return test::run_in_child_as<Run>(s, arch, [](const RunSummary& sum) {
    Run r;
    r.cycles = sum.cycles;
    r.loads = sum.loads;
    r.bytes_loaded = sum.bytes_loaded;
    r.checked = sum.scoreboard_checked;
    r.mismatches = sum.scoreboard_mismatches;
    r.violations = sum.invariant_violations;
    r.ctas = static_cast<uint64_t>(sum_stat(sum.stats, "", "ctas"));
    r.grid = sum.grid_ctas;
    r.waves = sum.waves;
    r.slots = sum.ctas_per_sm;
    r.max_concurrent = sum.max_concurrent_ctas;
    r.mean_concurrent = sum.mean_concurrent_ctas;
    r.sm0_ctas = static_cast<uint64_t>(sum_stat(sum.stats, "cta0", "ctas"));
    r.sm0_max_concurrent = static_cast<uint64_t>(sum_stat(sum.stats, "cta0", "max_concurrent_ctas"));
    r.consumer_cycles = sum.consumer_cycles;
    return r;
  }, launch);
}

void check_clean(const Run& r) {
  BOOST_TEST(r.checked >= r.loads);  // and the stores
  BOOST_TEST(r.mismatches == 0u);
  BOOST_TEST(r.violations == 0u);
}

// The message build_launch throws, or "" when it builds.
std::string launch_error(const Scenario& s, const ArchConfig& arch) {
  try {
    build_launch(s, arch);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// stream_tiles: 64x64 bf16 tiles (8 KB a stage).
const std::vector<std::string> kEightStages = {"sms=4", "workload.stages=8", "workload.max_tiles_per_sm=12"};

}  // namespace

BOOST_AUTO_TEST_CASE(reader_takes_a_number_or_auto) {
  BOOST_TEST(scenario("stream_tiles").workload.ctas_per_sm == 1u);
  BOOST_TEST(scenario("stream_tiles", {"workload.ctas_per_sm=3"}).workload.ctas_per_sm == 3u);
  BOOST_TEST(scenario("stream_tiles", {"workload.ctas_per_sm=auto"}).workload.ctas_per_sm == 0u);
  BOOST_TEST(scenario("gemm_bf16", {"workload.ctas_per_sm=2"}).workload.ctas_per_sm == 2u);
  BOOST_TEST(scenario("decode", {"workload.ctas_per_sm=auto"}).workload.ctas_per_sm == 0u);
  for (const char* bad : {"workload.ctas_per_sm=0", "workload.ctas_per_sm=many", "workload.ctas_per_sm=256"}) {
    std::string field;
    try {
      scenario("stream_tiles", {bad});
    } catch (const YamlError& e) {
      field = e.field();
    }
    BOOST_TEST(field == "workload.ctas_per_sm", bad);
  }
}

BOOST_AUTO_TEST_CASE(occupancy_from_shared_memory) {
  const ArchConfig arch = h100();
  // 8 stages x 8192 + 8 x 16 bytes of mbarriers = 65,664; + 1,024 reserved = 66,688 a CTA:
  // 3 x 66,688 = 200,064 <= 233,472 < 4 x 66,688 = 266,752.
  std::vector<std::string> sets = kEightStages;
  sets.push_back("workload.ctas_per_sm=auto");
  const Launch a = build_launch(scenario("stream_tiles", sets), arch);
  BOOST_TEST(a.ctas_per_sm == 3u);
  BOOST_TEST(a.cta_smem_bytes == 65664u);
  BOOST_TEST(a.cta_smem_stride == 66560u);  // 1024-byte aligned
  BOOST_TEST(a.ctas.size() == 12u);         // 3 x 4 SMs, a persistent grid
  // The SM's 12 tiles shared by its 3 CTAs: CTA e (SM e % 4) takes places e, e + 12, e + 24, e + 36.
  for (size_t e = 0; e < a.ctas.size(); ++e) {
    BOOST_TEST(a.sm[e] == static_cast<int32_t>(e % 4));
    BOOST_TEST(a.ctas[e].steps.size() == 4u);
  }
  // Place e of the row-major order: tile (y, x) = (e / 256, e % 256) of the 128 x 256 tiles.
  BOOST_TEST(a.ctas[5].steps[1].loads[0].cmd.op.coords[0] == static_cast<int32_t>((5 + 12) * 64));
  // Explicit and fitting.
  sets.back() = "workload.ctas_per_sm=3";
  BOOST_TEST(build_launch(scenario("stream_tiles", sets), arch).ctas_per_sm == 3u);
  // One more does not fit: the error names the field, the value and what fits.
  sets.back() = "workload.ctas_per_sm=4";
  const std::string e = launch_error(scenario("stream_tiles", sets), arch);
  BOOST_TEST(e.find("workload.ctas_per_sm") != std::string::npos, e);
  BOOST_TEST(e.find("ctas_per_sm = 4") != std::string::npos, e);
  BOOST_TEST(e.find("266752") != std::string::npos, e);
  BOOST_TEST(e.find("at most 3 fit") != std::string::npos, e);
  // A CTA larger than a CTA may be (227 KB): named by its field too.
  ArchConfig small = arch;
  small.smem.max_cta_bytes = 60000;
  sets.back() = "workload.ctas_per_sm=1";
  const std::string big = launch_error(scenario("stream_tiles", sets), small);
  BOOST_TEST(big.find("workload.stages") != std::string::npos, big);
  BOOST_TEST(big.find("smem.max_cta_bytes") != std::string::npos, big);
  // The other workloads take it too: GEMM (two 128 x 64 bf16 boxes, 32 KB a stage: 4 stages are
  // 131,136 bytes, one fits; 2 stages 65,568, three fit), decode (K and V of 1 stage, 64 KB, with
  // Q and O: two fit).
  BOOST_TEST(build_launch(scenario("gemm_bf16", {"workload.ctas_per_sm=auto"}), arch).ctas_per_sm == 1u);
  BOOST_TEST(build_launch(scenario("gemm_bf16", {"workload.ctas_per_sm=auto", "workload.stages=2"}), arch).ctas_per_sm ==
             3u);
  const Launch d = build_launch(scenario("decode", {"workload.stages=1", "workload.ctas_per_sm=2"}), arch);
  BOOST_TEST(d.ctas_per_sm == 2u);
}

BOOST_AUTO_TEST_CASE(two_ctas_on_an_sm_overlap) {
  const ArchConfig arch = h100();
  // One SM, 16 tiles of 8 KB, 1 stage a CTA, 500 cycles of math a tile.
  const std::vector<std::string> base = {"sms=1", "workload.stages=1", "workload.max_tiles_per_sm=16",
                                         "workload.compute_cycles=500"};
  std::vector<std::string> two = base;
  two.push_back("workload.ctas_per_sm=2");
  const Run serial = run(scenario("stream_tiles", base), arch);
  const Run overlap = run(scenario("stream_tiles", two), arch);
  check_clean(serial);
  check_clean(overlap);
  BOOST_TEST(serial.loads == 16u);
  BOOST_TEST(overlap.loads == 16u);
  BOOST_TEST(overlap.bytes_loaded == serial.bytes_loaded);
  BOOST_TEST(serial.ctas == 1u);
  BOOST_TEST(overlap.ctas == 2u);
  BOOST_TEST(overlap.grid == 2u);
  BOOST_TEST(overlap.slots == 2u);
  BOOST_TEST(overlap.waves == 1u);
  BOOST_TEST(overlap.max_concurrent == 2u);
  BOOST_TEST(overlap.sm0_max_concurrent == 2u);
  BOOST_TEST(overlap.mean_concurrent > 1.9);  // both CTAs run from start to (almost) the end
  BOOST_TEST(serial.max_concurrent == 1u);
  // Serially each tile waits for its load and then its math: 16 x (latency + 500).
  BOOST_TEST(serial.cycles >= 16 * (500 + arch.l2.hit_latency));
  // Two CTAs overlap one's load with the other's math ...
  BOOST_TEST(overlap.cycles < serial.cycles * 3 / 4, "2 CTAs " << overlap.cycles << ", serial " << serial.cycles);
  // ... but each CTA still computes its 8 tiles one after another, and the SM's link from the
  // L2 carries every byte.
  BOOST_TEST(overlap.cycles >= 8 * 500u);
  BOOST_TEST(overlap.cycles >= overlap.bytes_loaded / arch.l2.sm_port_bytes_per_cycle);
}

BOOST_AUTO_TEST_CASE(waves_with_the_dispatch_delay_between_them) {
  // GEMM, one CTA per tile (persistent: false), 12 tiles of one K step on 4 SMs, 1 CTA per SM:
  // 3 waves. 3,000 cycles of math a tile: the memory system is idle when a wave's CTAs end.
  // The L2's in-order slices off: with them a wave's answers depend on how its requests fall into
  // the 64-cycle bandwidth windows, which a delay of 444 cycles shifts (by a few cycles in all).
  ArchConfig arch = h100();
  arch.l2.in_order_slices = 0;
  const std::vector<std::string> sets = {"sms=4", "workload.m=384", "workload.n=512", "workload.k=64",
                                         "workload.compute_cycles=3000", "workload.schedule={persistent: false}",
                                         "workload.ctas_per_sm=1"};
  const Scenario s = scenario("gemm_bf16", sets);
  // 517 ns at 1,980 MHz: 1,024 cycles (16 bandwidth windows of 64 cycles, so that each wave meets
  // the same windows as without the delay).
  arch.launch.cta_dispatch_ns = 517;
  const Run delayed = run(s, arch);
  arch.launch.cta_dispatch_ns = 0;
  const Run immediate = run(s, arch);
  for (const Run* r : {&delayed, &immediate}) {
    check_clean(*r);
    BOOST_TEST(r->loads == 24u);
    BOOST_TEST(r->grid == 12u);
    BOOST_TEST(r->ctas == 12u);
    BOOST_TEST(r->waves == 3u);
    BOOST_TEST(r->max_concurrent == 1u);
    BOOST_TEST(r->sm0_ctas == 3u);
    BOOST_TEST(r->cycles >= 3 * (3000 + arch.l2.hit_latency));
  }
  // Two later waves, each starting 1,024 cycles after the last ended (today's model: 12,880
  // cycles without the delay, 3 waves of about 4,290; 14,928 with it).
  BOOST_TEST(delayed.cycles == immediate.cycles + 2 * 1024,
             "with the delay " << delayed.cycles << ", without " << immediate.cycles);
  // The H100's value: 224 ns = 443.5, so 444 cycles a later wave: 2 x 444 more than none.
  ArchConfig h = h100();
  h.l2.in_order_slices = 0;
  BOOST_TEST(h.launch.cta_dispatch_ns == 224u);
  const Run measured = run(s, h);
  BOOST_TEST(measured.waves == 3u);
  BOOST_TEST(measured.cycles == immediate.cycles + 2 * 444,
             "with 224 ns " << measured.cycles << ", without " << immediate.cycles);
}

BOOST_AUTO_TEST_CASE(each_cta_sets_up_before_its_first_load) {
  // 3 waves of one CTA on one SM (no other SM to share tiles with, whose order of arrival at the
  // L2 could change), each CTA spending workload.setup_cycles before it issues (its prologue:
  // silicon's calibration kernel takes about 2,340 cycles, docs/calibration.md): every wave starts
  // its loads 1,024 cycles later, so the run takes exactly 3 x 1,024 more, and the delay is the
  // CTA's (a trace of the launch carries it: test_trace.cpp).
  ArchConfig arch = h100();
  arch.l2.in_order_slices = 0;
  arch.launch.cta_dispatch_ns = 0;
  std::vector<std::string> sets = {"sms=1", "workload.m=384", "workload.n=128", "workload.k=64",
                                   "workload.compute_cycles=3000", "workload.schedule={persistent: false}",
                                   "workload.ctas_per_sm=1"};
  const Run immediate = run(scenario("gemm_bf16", sets), arch);
  sets.push_back("workload.setup_cycles=1024");
  const Scenario s = scenario("gemm_bf16", sets);
  BOOST_TEST(build_launch(s, arch).setup_cycles == 1024u);
  const Run set_up = run(s, arch);
  check_clean(set_up);
  BOOST_TEST(set_up.waves == 3u);
  BOOST_TEST(set_up.loads == immediate.loads);
  BOOST_TEST(set_up.cycles == immediate.cycles + 3 * 1024,
             "with set-up " << set_up.cycles << ", without " << immediate.cycles);
}

BOOST_AUTO_TEST_CASE(each_step_issues_after_the_producers_own_cycles) {
  // One SM, 16 tiles of 64x64 bf16 from a warm L2, 4 stages, no consumer work: the producer's own
  // loop sets when each step issues. 10,000 and 20,000 cycles a step are both far longer than a
  // tile's trip, so every tile finds the memory system idle and takes the same time (from DRAM a
  // page left open or not changes it by a few cycles), and the runs differ by exactly the 15 gaps
  // between the 16 issues.
  ArchConfig arch = h100();
  arch.l2.in_order_slices = 0;
  std::vector<std::string> sets = {"sms=1", "l2_warm=true", "workload.max_tiles_per_sm=16", "workload.compute_cycles=0"};
  const Run free_running = run(scenario("stream_tiles", sets), arch);
  sets.push_back("workload.issue_cycles=10000");
  const Scenario s = scenario("stream_tiles", sets);
  BOOST_TEST(build_launch(s, arch).issue_cycles == 10000u);
  const Run ten = run(s, arch);
  sets.back() = "workload.issue_cycles=20000";
  const Run twenty = run(scenario("stream_tiles", sets), arch);
  check_clean(ten);
  check_clean(twenty);
  BOOST_TEST(ten.loads == 16u);
  BOOST_TEST(twenty.cycles == ten.cycles + 15 * 10000, "20,000 a step " << twenty.cycles << ", 10,000 " << ten.cycles);
  // Unbound by its issue, the stream takes far less than the 15 gaps.
  BOOST_TEST(free_running.cycles < 15 * 10000u);
  BOOST_TEST(ten.cycles > 15 * 10000u);
}

BOOST_AUTO_TEST_CASE(the_issue_time_counts_from_a_load_that_waited_for_its_release) {
  // One SM streaming 8 tiles from a warm L2 after a first step that only computes 20,000 cycles
  // (a trailing CTA's delay: heldout_workloads.py's coalesce pairs), its first load waiting for that
  // step's release. The producer's own cycles for the next load count from when that load issues,
  // not from before its wait: the 8 loads go 20,000, 20,000 + issue_cycles, ... (and not two at
  // once), so 2,000 cycles a step take exactly 7 x 1,000 more than 1,000.
  ArchConfig arch = h100();
  arch.l2.in_order_slices = 0;
  const auto after_wait = [&](uint32_t issue) {
    const Scenario s = scenario("stream_tiles", {"sms=1", "l2_warm=true", "workload.max_tiles_per_sm=8",
                                                 "workload.compute_cycles=0", "workload.stages=4",
                                                 "workload.issue_cycles=" + std::to_string(issue)});
    Launch l = build_launch(s, arch);
    std::vector<Step>& steps = l.ctas.at(0).steps;
    BOOST_REQUIRE(steps.size() == 8u);
    Step wait;
    wait.compute_cycles = 20000;
    steps.insert(steps.begin(), wait);
    steps[1].release_wait_from = 0;
    // Each load into its step's stage (one later than the workload put it).
    for (size_t i = 1; i < steps.size(); ++i)
      for (IssueOp& op : steps[i].loads) op.cmd.op.smem_addr = static_cast<uint32_t>(i % 4) * 8192;
    return run(s, arch, &l);
  };
  const Run ten = after_wait(1000), twenty = after_wait(2000);
  check_clean(ten);
  check_clean(twenty);
  BOOST_TEST(ten.loads == 8u);
  BOOST_TEST(ten.cycles > 20000u + 7 * 1000);
  BOOST_TEST(twenty.cycles == ten.cycles + 7 * 1000, "2,000 a step " << twenty.cycles << ", 1,000 " << ten.cycles);
}

BOOST_AUTO_TEST_CASE(a_waiting_thread_goes_on_a_handoff_after_the_signal) {
  // One SM, one stage, 16 tiles from a warm L2: the consumer waits for every tile's data (16
  // handoffs) and the producer for every release but before the first tile (15): silicon's
  // space.cu sees a release 126 cycles after it (roundtrip.csv, docs/calibration.md).
  ArchConfig arch = h100();
  arch.l2.in_order_slices = 0;
  std::vector<std::string> sets = {"sms=1", "l2_warm=true", "workload.max_tiles_per_sm=16", "workload.stages=1",
                                   "workload.compute_cycles=95", "workload.handoff_cycles=1000"};
  const Scenario s = scenario("stream_tiles", sets);
  BOOST_TEST(build_launch(s, arch).handoff_cycles == 1000u);
  const Run one = run(s, arch);
  sets.back() = "workload.handoff_cycles=2000";
  const Run two = run(scenario("stream_tiles", sets), arch);
  check_clean(one);
  check_clean(two);
  BOOST_TEST(two.loads == 16u);
  BOOST_TEST(two.cycles == one.cycles + 31 * 1000, "2,000 a handoff " << two.cycles << ", 1,000 " << one.cycles);
}

BOOST_AUTO_TEST_CASE(ctas_blocked_on_a_full_command_queue_enter_it_in_turn) {
  // One SM, 4 CTAs of 4 stages (16 loads of 64x64 bf16 tiles wanted at once), a command queue of
  // 2 entries: every producer blocks on the queue at every step. Each on a warp scheduler of its
  // own, taken in turn, the CTAs' commands alternate, so each CTA's 16th tile is among the last 4
  // the unit takes: the mean CTA ends within 3 tiles' issue (64 requests, a cycle each) of the last, at least 0.98
  // of the way (today 145 cycles before the last of about 9,400; in SystemC's wake-up order 530).
  ArchConfig arch = h100();
  arch.tma.command_queue_depth = 2;
  const Run r = run(scenario("stream_tiles", {"sms=1", "workload.ctas_per_sm=4", "workload.stages=4",
                                              "workload.max_tiles_per_sm=64", "workload.compute_cycles=0"}),
                    arch);
  check_clean(r);
  BOOST_TEST(r.loads == 64u);
  BOOST_TEST(r.ctas == 4u);
  BOOST_TEST(r.max_concurrent == 4u);
  const double mean_end = r.consumer_cycles / 4.0;
  BOOST_TEST(mean_end >= 0.98 * r.cycles, "the CTAs end on average at " << mean_end << " of " << r.cycles);
  BOOST_TEST(r.cycles - mean_end <= 3 * 64, "mean end " << mean_end << ", last " << r.cycles);
}

BOOST_AUTO_TEST_CASE(a_producer_with_a_warp_scheduler_to_itself_gets_more_of_a_full_queue) {
  // One SM, 3 CTAs of 8 stages and 16 tiles each from a warm L2 (short trips: the producers wait on
  // the queue, not on their stages) over a 2-entry command queue. With 2 warps a CTA
  // the producers of slots 0 and 2 share warp scheduler 0 and slot 1's has scheduler 2 to itself;
  // the queue takes the schedulers in turn, so slot 1 gets every other entry and is done after
  // about 32 of the 48 (about 2/3 of the run) while the other two end together at the end: the
  // mean CTA ends near (2/3 + 1 + 1) / 3 = 0.89 of the run (today 0.90). With 1 warp a CTA each
  // has its own scheduler and they end close together (today the mean at 0.97: a producer not
  // blocked when its scheduler's turn comes, between two of its issues, loses the turn). Silicon's
  // space.cu, 64 threads, 3 CTAs per SM: the second CTA ends at 0.72 of the run, the others at 0.95.
  ArchConfig arch = h100();
  arch.tma.command_queue_depth = 2;
  std::vector<std::string> sets = {"sms=1",           "l2_warm=true",
                                   "workload.ctas_per_sm=3", "workload.stages=8",
                                   "workload.max_tiles_per_sm=48", "workload.compute_cycles=0",
                                   "workload.warps_per_cta=2"};
  const Scenario two_warps = scenario("stream_tiles", sets);
  BOOST_TEST(build_launch(two_warps, arch).warps_per_cta == 2u);
  const Run shared = run(two_warps, arch);
  sets.back() = "workload.warps_per_cta=1";
  const Run own = run(scenario("stream_tiles", sets), arch);
  for (const Run* r : {&shared, &own}) {
    check_clean(*r);
    BOOST_TEST(r->loads == 48u);
    BOOST_TEST(r->ctas == 3u);
  }
  const double shared_mean = shared.consumer_cycles / 3.0, own_mean = own.consumer_cycles / 3.0;
  BOOST_TEST(shared_mean <= 0.92 * shared.cycles, "2 warps: mean end " << shared_mean << " of " << shared.cycles);
  BOOST_TEST(shared_mean >= 0.85 * shared.cycles, "2 warps: mean end " << shared_mean << " of " << shared.cycles);
  BOOST_TEST(own_mean >= 0.95 * own.cycles, "1 warp: mean end " << own_mean << " of " << own.cycles);
  // The same 48 tiles through one unit either way.
  BOOST_TEST(shared.cycles <= own.cycles * 1.02);
  BOOST_TEST(own.cycles <= shared.cycles * 1.02);
}

BOOST_AUTO_TEST_CASE(a_grid_in_waves_fills_every_slot) {
  // 16 tiles on 4 SMs with 2 CTAs per SM (2 stages of 32 KB: they fit): 8 start at once, 2 waves.
  const ArchConfig arch = h100();
  const Scenario s = scenario("gemm_bf16", {"sms=4", "workload.m=512", "workload.n=512", "workload.k=128",
                                            "workload.stages=2",
                                            "workload.schedule={persistent: false}", "workload.ctas_per_sm=2"});
  const Launch l = build_launch(s, arch);
  BOOST_TEST(l.ctas.size() == 16u);
  for (size_t e = 0; e < 16; ++e) BOOST_TEST(l.sm[e] == (e < 8 ? static_cast<int32_t>(e % 4) : kAnySm));
  const Run r = run(s, arch);
  check_clean(r);
  BOOST_TEST(r.ctas == 16u);
  BOOST_TEST(r.waves == 2u);
  BOOST_TEST(r.max_concurrent == 2u);
  BOOST_TEST(r.sm0_ctas == 4u);
}

BOOST_AUTO_TEST_CASE(attention_and_clusters_with_two_ctas_per_sm) {
  const ArchConfig arch = h100();
  // Decode (split KV) and a multicast GEMM in clusters of 2, each cluster's CTAs in one slot of
  // its SMs: every operation checked against the reference engine.
  const Run d = run(scenario("decode", {"sms=8", "workload.stages=1", "workload.ctas_per_sm=2"}), arch);
  check_clean(d);
  BOOST_TEST(d.max_concurrent == 2u);
  const Run g = run(scenario("gemm_multicast", {"sms=4", "workload.m=512", "workload.n=512", "workload.stages=2",
                                                "workload.ctas_per_sm=2"}),
                    arch);
  BOOST_TEST(g.mismatches == 0u);
  BOOST_TEST(g.violations == 0u);
  BOOST_TEST(g.max_concurrent == 2u);
  BOOST_TEST(g.grid == 8u);
}
