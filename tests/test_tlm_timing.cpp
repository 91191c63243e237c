// Timing of the TLM pipeline on simple cases, with the expected cycle of each completion
// worked out from the architecture parameters (docs/architecture.md, "Timing"). One elaboration
// runs every scenario one after another (SystemC allows one per process); the test cases then
// check what it recorded.
#define BOOST_TEST_MODULE tlm_timing
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <boost/test/unit_test.hpp>

#include <systemc>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <map>
#include <memory>

#include "tma/descriptor/descriptor_codec.h"
#include "tma/gpu/gpu_system.h"
#include "tma/core/stats.h"
#include "tma/tma/swizzle_crossbar.h"

using namespace tma;

// SystemC's library wants an sc_main; Boost.Test provides main.
int sc_main(int, char**) { return 0; }

namespace {

// Round numbers, bandwidth accounted cycle by cycle (window 1), so every time below is exact.
ArchConfig test_arch() {
  ArchConfig a;
  a.name = "timing-test";
  a.sm_count = 4;
  a.sm_clock_mhz = 1000;
  a.tma = {8, 16, 10, 1, 64, 5};  // queue, in flight, setup, AGU rate, outstanding, completion
  // One level (4 sets of 2) and the SM's L1 behind it (64 descriptors, 30 cycles); a miss
  // everywhere takes the L2's own round trip.
  a.descriptor_cache = {8, 2, 4, 0, 0, 0, 64, 30};
  a.smem.write_bytes_per_cycle = 128;
  a.smem.read_bytes_per_cycle = 128;
  a.smem.lsu_bytes_per_cycle = 128;
  a.smem.crossbar_latency = 2;
  a.l2.capacity_bytes = 1 << 20;
  a.l2.ways = 16;
  a.l2.hit_latency = 100;  // 50 each way
  a.l2.bytes_per_cycle = 256;
  a.l2.sm_port_bytes_per_cycle = 64;
  a.l2.reduction_bytes_per_cycle = 64;
  a.l2.request_overhead_cycles = 0;
  a.dram.bytes_per_cycle = 64;
  a.dram.latency = 200;
  a.sim.quantum_cycles = 100;  // a unit runs at most 100 cycles ahead: timing stays exact here
  a.sim.bandwidth_window_cycles = 1;
  return a;
}

constexpr uint64_t kDescA = 0x7000000000, kDescB = 0x7000000080, kDescStream = 0x7000000100;

// Issues a script of commands on one SM; with `serial`, each after the last has completed.
class ScriptIssuer : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<ScriptIssuer> cmd_out;
  tlm_utils::simple_target_socket<ScriptIssuer> completion_in;
  tlm_utils::simple_initiator_socket<ScriptIssuer> lsu_out;
  std::vector<TmaCommand> script;
  bool serial = true;
  uint64_t start_cycle = 0;
  std::map<uint64_t, uint64_t> done_at;  // op id -> completion cycle
  sc_core::sc_event done;

  explicit ScriptIssuer(sc_core::sc_module_name n)
      : sc_module(n), cmd_out("cmd_out"), completion_in("completion_in"), lsu_out("lsu_out") {
    completion_in.register_b_transport(this, &ScriptIssuer::completed);
  }
  void run_script() {
    if (start_cycle > clock_.now_cycles()) sc_core::wait(clock_.to_time(start_cycle - clock_.now_cycles()));
    for (TmaCommand c : script) {
      tlm::tlm_generic_payload gp;
      gp.set_command(tlm::TLM_WRITE_COMMAND);
      sc_core::sc_time d = sc_core::SC_ZERO_TIME;
      ScopedExtension<TmaCommand> ext(gp, &c);
      cmd_out->b_transport(gp, d);
      if (serial)
        while (!done_at.count(c.op_id)) sc_core::wait(done);
    }
    while (done_at.size() < script.size()) sc_core::wait(done);
  }
  CycleClock clock_{1000};

 private:
  void completed(tlm::tlm_generic_payload& gp, sc_core::sc_time&) {
    if (auto* c = gp.get_extension<TmaCompletion>()) done_at[c->op_id] = clock_.now_cycles();
    done.notify(sc_core::SC_ZERO_TIME);
  }
};

TmaCommand load(uint64_t desc, std::array<int32_t, 5> coords, uint32_t smem, uint64_t id) {
  TmaCommand c;
  c.descriptor_address = desc;
  c.op.kind = OpKind::load;
  c.op.coords = coords;
  c.op.smem_addr = smem;
  c.op_id = id;
  return c;
}

TensorMap map_u8(uint64_t address, uint64_t dim0, uint64_t dim1, uint64_t stride, uint32_t box0, uint32_t box1,
                 L2Promotion p) {
  TensorMap m;
  m.dtype = DataType::u8;
  m.rank = 2;
  m.global_address = address;
  m.dims = {dim0, dim1, 0, 0, 0};
  m.strides = {stride, 0, 0, 0};
  m.box = {box0, box1, 0, 0, 0};
  m.l2_promotion = p;
  return m;
}

// What the run recorded, for the test cases.
struct Recorded {
  std::map<uint64_t, uint64_t> sm0_done;
  uint64_t stream_last_done = 0;
  std::map<std::string, StatsRecord> stats_after_loads, stats_after_stream, stats_end;
  uint64_t lsu_conflicting_done = 0, lsu_swizzled_done = 0;
  std::map<uint64_t, uint64_t> sm1_latency;  // phase 4: op id -> issue-to-completion cycles
  uint64_t violations_before_abandon = 0, violations_at_end = 0;
  std::string first_violation;
};
Recorded g;

double stat(const std::map<std::string, StatsRecord>& s, const std::string& path, const std::string& name) {
  auto it = s.find(path);
  if (it == s.end()) return -1;
  for (const auto& [n, v] : it->second.values())
    if (n == name) return v;
  return -1;
}

// The testbench top: runs the scripts in phases and records.
class Bench : public sc_core::sc_module {
 public:
  GpuSystem gpu;
  std::vector<std::unique_ptr<ScriptIssuer>> issuers;
  explicit Bench(sc_core::sc_module_name n) : sc_module(n), gpu("gpu", test_arch(), 4, 1, GpuArch::sm90) {
    for (int sm = 0; sm < 4; ++sm) {
      issuers.push_back(std::make_unique<ScriptIssuer>(("issuer" + std::to_string(sm)).c_str()));
      issuers.back()->cmd_out.bind(gpu.unit(sm).cmd_in);
      gpu.fabric().completion_out.bind(issuers.back()->completion_in);
      issuers.back()->lsu_out.bind(gpu.unit(sm).smem().lsu_in);
    }
    auto put = [&](uint64_t at, const TensorMap& m) {
      auto bytes = encode_descriptor(m);
      gpu.memory().write(at, bytes.data(), bytes.size());
    };
    put(kDescA, map_u8(0x10000000, 64, 2, 1024, 64, 2, L2Promotion::none));
    put(kDescB, map_u8(0x20000000, 64, 2, 1024, 64, 2, L2Promotion::b256));
    put(kDescStream, map_u8(0x30000000, 128, 4096, 128, 128, 32, L2Promotion::none));
    // Copies of A in the same first-level set as A (4 sets of 128-byte descriptors: 512 apart).
    put(kDescA + 512, map_u8(0x10000000, 64, 2, 1024, 64, 2, L2Promotion::none));
    put(kDescA + 1024, map_u8(0x10000000, 64, 2, 1024, 64, 2, L2Promotion::none));
    put(kDescA + 1536, map_u8(0x10000000, 64, 2, 1024, 64, 2, L2Promotion::none));
    SC_HAS_PROCESS(Bench);
    SC_THREAD(run);
  }
  void run() {
    // Phase 1 (SM 0, idle system): load A twice (descriptor miss, then hit), then B (promotion 256B).
    ScriptIssuer& s0 = *issuers[0];
    s0.script = {load(kDescA, {0, 0}, 0, 1), load(kDescA, {0, 0}, 0, 2), load(kDescB, {0, 0}, 1024, 3)};
    s0.run_script();
    g.sm0_done = s0.done_at;
    g.stats_after_loads = collect_hierarchy_stats();
    // Phase 2: four SMs stream 16 cold 4 KB tiles each (DRAM-bound), all issued at once.
    const uint64_t t0 = s0.clock_.now_cycles();
    for (int sm = 0; sm < 4; ++sm) {
      ScriptIssuer& s = *issuers[sm];
      s.script.clear();
      s.done_at.clear();
      s.serial = false;
      for (int t = 0; t < 16; ++t)
        s.script.push_back(load(kDescStream, {0, (sm * 16 + t) * 32}, static_cast<uint32_t>((t % 4) * 4096),
                                static_cast<uint64_t>(100 + sm * 16 + t)));
    }
    for (int sm = 1; sm < 4; ++sm) sc_core::sc_spawn([this, sm] { issuers[sm]->run_script(); });
    issuers[0]->run_script();
    for (int sm = 1; sm < 4; ++sm)
      while (issuers[sm]->done_at.size() < 16) sc_core::wait(issuers[sm]->done);
    for (auto& s : issuers)
      for (auto [id, at] : s->done_at) g.stream_last_done = std::max(g.stream_last_done, at - t0);
    g.stats_after_stream = collect_hierarchy_stats();
    // Phase 3: the consumer reads 8 rows of one 16-byte column: rows 128 bytes apart put them all
    // in the same four banks (8 wavefronts); the 128B swizzle spreads them (1 wavefront).
    g.lsu_conflicting_done = lsu_column(SwizzleMode::none);
    sc_core::wait(sc_core::sc_time(100, sc_core::SC_NS));  // let the port drain
    g.lsu_swizzled_done = lsu_column(SwizzleMode::b128);
    // Phase 4 (SM 1, A's data L2-resident): A (miss), A (first-level hit), two copies of A that
    // push it out of its 2-way set, A again (served by the SM's L1), invalidate A, A (fetched).
    ScriptIssuer& s1 = *issuers[1];
    s1.script = {load(kDescA, {0, 0}, 0, 201), load(kDescA, {0, 0}, 0, 202), load(kDescA + 512, {0, 0}, 0, 203),
                 load(kDescA + 1024, {0, 0}, 0, 204), load(kDescA, {0, 0}, 0, 205)};
    TmaCommand inval;
    inval.kind = UnitCommandKind::invalidate_descriptor;
    inval.descriptor_address = kDescA;
    inval.op_id = 206;
    s1.script.push_back(inval);
    s1.script.push_back(load(kDescA, {0, 0}, 0, 207));
    // A fourth copy passed as a kernel parameter: its first use reads the constant bank.
    TmaCommand param = load(kDescA + 1536, {0, 0}, 0, 208);
    param.descriptor_in_param = true;
    s1.script.push_back(param);
    s1.done_at.clear();
    s1.serial = true;
    uint64_t prev = s1.clock_.now_cycles();
    s1.run_script();
    for (auto [id, at] : s1.done_at) {  // serial: each was issued when the one before completed
      g.sm1_latency[id] = at - prev;
      prev = at;
    }
    g.stats_end = collect_hierarchy_stats();
    g.violations_before_abandon = gpu.invariants().violations();
    // Phase 5: a load issued and abandoned (the run stops before it completes): the end-of-run
    // invariant check must say so.
    tlm::tlm_generic_payload gp;
    TmaCommand c = load(kDescA, {0, 0}, 0, 999);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    {
      ScopedExtension<TmaCommand> ext(gp, &c);
      issuers[0]->cmd_out->b_transport(gp, d);
    }
    sc_core::sc_stop();
  }
  uint64_t lsu_column(SwizzleMode mode) {
    SmemAccess acc;
    for (uint32_t r = 0; r < 8; ++r) acc.chunks.push_back(SmemChunk{crossbar_swizzle(mode, SwizzleAtom::b16, r * 128), 16, r * 16});
    std::vector<uint8_t> data(128);
    tlm::tlm_generic_payload gp;
    gp.set_command(tlm::TLM_READ_COMMAND);
    gp.set_data_ptr(data.data());
    gp.set_data_length(128);
    ScopedExtension<SmemAccess> ext(gp, &acc);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    issuers[0]->lsu_out->b_transport(gp, d);
    const CycleClock clock(1000);
    return clock.to_cycles(d);
  }
};

struct RunOnce {
  RunOnce() {
    static Bench bench("bench");
    sc_core::sc_start();
    bench.gpu.check_drained();
    g.violations_at_end = bench.gpu.invariants().violations();
    if (!bench.gpu.invariants().first_violations().empty()) g.first_violation = bench.gpu.invariants().first_violations().front();
  }
};
BOOST_TEST_GLOBAL_FIXTURE(RunOnce);

}  // namespace

// Load A, cold. setup 10 -> descriptor miss: 50 to the L2, the sectors from DRAM (128 B at 64 B/cycle
// = 2 cycles, + 200), 128 B back over the SM link (2 cycles) + 50 = 314, + hit latency 4 = 318.
// Row 0 goes at 318: L2 at 368, DRAM 1 cycle + 200 = 569, link 1 + 50 = 620, smem write 1 + 2 = 623.
// Row 1 one cycle later ends at 624; complete_tx 5 cycles later: 629.
BOOST_AUTO_TEST_CASE(one_load_descriptor_miss) { BOOST_TEST(g.sm0_done.at(1) == 629u); }

// The same load again, issued at 629: setup to 639, descriptor hit 643; row 0 is an L2 hit:
// 693 + 1, link 1 + 50 = 745, write 748; row 1 at 644 ends at 749; + 5 = 754.
BOOST_AUTO_TEST_CASE(one_load_descriptor_hit) { BOOST_TEST(g.sm0_done.at(2) == 754u); }

BOOST_AUTO_TEST_CASE(counters_after_three_loads) {
  const auto& s = g.stats_after_loads;
  BOOST_TEST(stat(s, "bench.gpu.sm0.descriptor_cache", "misses") == 2);  // A once, B once
  BOOST_TEST(stat(s, "bench.gpu.sm0.descriptor_cache", "hits") == 1);
  BOOST_TEST(stat(s, "bench.gpu.sm0", "loads") == 3);
  BOOST_TEST(stat(s, "bench.gpu.sm0", "bytes_loaded") == 3 * 128);
  BOOST_TEST(stat(s, "bench.gpu.sm0.splitter", "l2_requests") == 6);      // two rows each
  BOOST_TEST(stat(s, "bench.gpu.sm0.splitter", "sectors_requested") == 12);
  // L2: 2 descriptors (4 sectors each) + 3 loads x 4 sectors; the second load of A hits.
  BOOST_TEST(stat(s, "bench.gpu.l2", "sectors_requested") == 20);
  BOOST_TEST(stat(s, "bench.gpu.l2", "sector_hits") == 4);
  // DRAM fills: descriptors 2 x 128, A's rows 2 x 64, B's rows at 256-byte promotion 2 x 256.
  BOOST_TEST(stat(s, "bench.gpu.l2", "dram_fill_bytes") == 256 + 128 + 512);
  BOOST_TEST(stat(s, "bench.gpu.dram", "read_bytes") == 256 + 128 + 512);
  BOOST_TEST(stat(s, "bench.gpu.sm0.smem", "bank_conflicts") == 0);
}

// 64 cold 4 KB tiles = 256 KB through DRAM at 64 B/cycle: 4096 cycles of transfer. Every SM waits
// for the descriptor (318 cycles, as above: the other three find its fill in flight in the L2 and
// wait for it); the first rows reach DRAM 50 cycles later. 256 requests in flight keep DRAM busy
// (it needs 64 B/cycle x ~310 cycles of latency = 155 of them), so the last row leaves DRAM no
// sooner than 368 + 4096 and lands 200 (DRAM) + 52 (link) + 3 (write) + 5 (completion) later.
// A descriptor the unit's levels lost but the SM's L1 holds costs exactly the L1's 30 cycles over a
// first-level hit; after an invalidate (fence.proxy.tensormap) it is fetched again, from the L2.
BOOST_AUTO_TEST_CASE(descriptor_served_by_the_sm_l1) {
  const auto& l = g.sm1_latency;
  BOOST_TEST_REQUIRE(l.size() == 8u);
  BOOST_TEST(l.at(205) == l.at(202) + 30);
  BOOST_TEST(l.at(207) > l.at(205));
  BOOST_TEST(l.at(201) == l.at(207));  // both fetch the descriptor, the data is in the L2 for both
  BOOST_TEST(l.at(208) == l.at(202) + 42);  // a kernel parameter's first use: param_fetch_latency
  BOOST_TEST(stat(g.stats_end, "bench.gpu.sm1.descriptor_cache", "misses_served_by_sm_l1") == 1);
  // 201, 203, 204, 205, 207, 208, and the stream's descriptor in phase 2.
  BOOST_TEST(stat(g.stats_end, "bench.gpu.sm1.descriptor_cache", "misses") == 7);
}

BOOST_AUTO_TEST_CASE(dram_bound_stream) {
  BOOST_TEST(g.stream_last_done >= 368u + 4096u + 260u);
  BOOST_TEST(g.stream_last_done <= (368u + 4096u + 260u) * 101 / 100);
  const double dram =
      stat(g.stats_after_stream, "bench.gpu.dram", "read_bytes") - stat(g.stats_after_loads, "bench.gpu.dram", "read_bytes");
  BOOST_TEST(dram == 64 * 4096 + 128);  // the tiles, and the descriptor once: the L2 serves it to the others
}

// 8 chunks in one bank group: 8 wavefronts at one per cycle, + 2 latency; swizzled: 1 + 2.
BOOST_AUTO_TEST_CASE(bank_conflicts_of_a_layout) {
  BOOST_TEST(g.lsu_conflicting_done == 10u);
  BOOST_TEST(g.lsu_swizzled_done == 3u);
  BOOST_TEST(stat(g.stats_end, "bench.gpu.sm0.smem", "lsu_bank_conflicts") == 7);
  BOOST_TEST(stat(g.stats_end, "bench.gpu.sm0.smem", "lsu_wavefronts") == 9);
}

// Everything up to phase 4 keeps the invariants; the abandoned load is reported as never completed.
BOOST_AUTO_TEST_CASE(invariants_hold_and_catch_an_abandoned_operation) {
  BOOST_TEST(g.violations_before_abandon == 0u);
  BOOST_TEST(g.violations_at_end >= 1u);
  BOOST_TEST(g.first_violation.find("bench.gpu.sm0") == 0u);
}
