// Example: the TMA model as the golden model inside YOUR SystemC testbench (docs/integration.md).
//
// A user-written issuer module (in a real bench: the CTA's instruction stream, or the adapter in
// front of the DUT) drives SM 0 of a GpuSystem through the model's TLM sockets. In one SystemC run
// it
//   1. builds a TensorMap, validates it as the CUDA driver would, writes its 128-byte encoding and a
//      small bf16 tensor into the model's global memory;
//   2. loads a box with the 64B swizzle that hangs off the tensor on two sides (OOB fill: NaN);
//   3. reduce-adds that tile back into the tensor, clipped at the tensor's edge;
//   4. rewrites the descriptor in memory (128B swizzle): a load still gets the cached old one; after
//      an invalidate_descriptor command (fence.proxy.tensormap) the re-issued load gets the new one;
//   5. issues a load to a shared-memory address that is not 128-byte aligned: it must fault and
//      leave shared memory alone.
// Each tensor operation is also run by the reference engine (tb/reference_engine.h, plain C++, no
// SystemC) on copies of the same global and shared memory, and the results are compared byte for
// byte. An OpObserver collects the model's per-operation records; the project's ready-made
// Scoreboard (another OpObserver) checks every operation as well.
//
// SystemC allows one elaboration per process: everything runs under one sc_start() in a global
// fixture, and the test cases below check what it recorded.
#define BOOST_TEST_MODULE integration_example
#include <boost/test/unit_test.hpp>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tma/config/arch_config_yaml.h"       // load_arch_config (tma_config)
#include "tma/descriptor/descriptor_codec.h"       // encode_descriptor
#include "tma/descriptor/descriptor_validation.h"  // validate_tensor_map
#include "tma/gpu/gpu_system.h"             // GpuSystem, TmaUnit, OpObserver, TmaCommand, TmaCompletion
#include "tma/config/paths.h"                  // resolve_project_path
#include "tma/reference/reference_engine.h"       // reference_execute
#include "tma/scenario/scoreboard.h"             // Scoreboard
#include "tma/core/stats.h"                  // collect_hierarchy_stats

using namespace tma;

// libsystemc wants an sc_main; Boost.Test provides main() and we call sc_start() ourselves.
int sc_main(int, char**) { return 0; }

namespace {

// ------------------------------------------------------------------------------------------------
// The data: a 40 x 24 bf16 tensor, rows padded to 96 bytes, somewhere in the (sparse) global memory.
// ------------------------------------------------------------------------------------------------
constexpr uint64_t kDescriptorAddr = 0x40000000;  // the 128-byte descriptor (what a CUtensorMap* points to)
constexpr uint64_t kTensorAddr = 0x50000000;      // element (0, 0)
constexpr uint64_t kDim0 = 40, kDim1 = 24, kRowPitch = 96;
constexpr uint64_t kTensorBytes = kRowPitch * kDim1;
constexpr uint32_t kLoadSmem = 0x400;             // shared-memory destinations: 128-byte aligned
constexpr uint32_t kMbarrier = 7;                 // any id: the completion echoes it

uint16_t bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return static_cast<uint16_t>(u >> 16);  // exact for the small integers used here
}
uint16_t element_value(uint64_t x, uint64_t y) { return bf16(static_cast<float>((x + 3 * y) % 64)); }

TensorMap make_map() {
  TensorMap m;
  m.mode = TensorMode::tiled;
  m.dtype = DataType::bf16;
  m.rank = 2;
  m.global_address = kTensorAddr;
  m.dims = {kDim0, kDim1, 0, 0, 0};  // elements, innermost first
  m.strides = {kRowPitch, 0, 0, 0};  // bytes; strides[0] steps dimension 1
  m.box = {32, 16, 0, 0, 0};         // 32 x 2 bytes = 64-byte rows: the 64B swizzle's span
  m.swizzle = SwizzleMode::b64;
  m.l2_promotion = L2Promotion::b128;
  m.oob_fill = OobFill::nan;         // out-of-bound bf16 elements read as 0x7FF7
  return m;
}

TmaCommand tensor_op(OpKind kind, int32_t x, int32_t y, uint32_t smem_addr, uint64_t op_id) {
  TmaCommand c;
  c.kind = UnitCommandKind::tensor_op;
  c.op.kind = kind;
  c.op.coords = {x, y, 0, 0, 0};
  c.op.smem_addr = smem_addr;
  c.descriptor_address = kDescriptorAddr;
  c.mbarrier = kMbarrier;
  c.op_id = op_id;  // unique per operation: completions and records are matched by it
  c.sm = 0;
  return c;
}

std::string first_difference(const std::vector<uint8_t>& model, const std::vector<uint8_t>& reference) {
  if (model.size() != reference.size()) return "sizes differ";
  for (size_t i = 0; i < model.size(); ++i) {
    if (model[i] != reference[i]) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "byte %zu: model 0x%02x, reference 0x%02x", i, model[i], reference[i]);
      return buf;
    }
  }
  return "";
}

// ------------------------------------------------------------------------------------------------
// Per-operation records: the model calls every OpObserver of a unit around each tensor operation.
// (Descriptor prefetch / invalidate commands are not tensor operations and produce no record.)
// ------------------------------------------------------------------------------------------------
class RecordingObserver : public OpObserver {
 public:
  std::map<uint64_t, OpRecord> records;  // by op id
  void op_finished(int /*sm*/, const OpRecord& rec) override { records[rec.cmd.op_id] = rec; }
};

// What one step recorded, for the test cases.
struct Step {
  tlm::tlm_response_status status = tlm::TLM_INCOMPLETE_RESPONSE;  // of the command's b_transport
  TmaCompletion completion;                  // what the model reported (mbarrier complete_tx)
  sc_core::sc_time issued_at, completed_at;  // simulated times
  OpResult reference;                        // what the reference engine computed
  std::string smem_mismatch, global_mismatch;  // empty: byte-identical to the reference
  bool smem_unchanged = false, global_unchanged = false;
};

// ------------------------------------------------------------------------------------------------
// The user's issuer.
// ------------------------------------------------------------------------------------------------
class MyIssuer : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<MyIssuer> cmd_out;     // -> gpu.unit(sm).cmd_in
  tlm_utils::simple_target_socket<MyIssuer> completion_in;  // <- gpu.fabric().completion_out
  tlm_utils::simple_initiator_socket<MyIssuer> lsu_out;     // -> gpu.unit(sm).smem().lsu_in (must be bound)

  std::map<std::string, Step> steps;
  std::string validation_error, refused_rule;
  uint16_t swizzled_spot = 0;  // a bf16 read at a hand-computed swizzled address

  MyIssuer(sc_core::sc_module_name name, GpuSystem& gpu, uint32_t sm)
      : sc_module(name), cmd_out("cmd_out"), completion_in("completion_in"), lsu_out("lsu_out"), gpu_(gpu), sm_(sm) {
    completion_in.register_b_transport(this, &MyIssuer::on_completion);
    SC_HAS_PROCESS(MyIssuer);
    SC_THREAD(run);
  }

 private:
  struct Arrival {
    TmaCompletion completion;
    sc_core::sc_time at;
  };

  // The fabric calls this at the simulated time the operation completes (its last byte landed,
  // plus the completion latency). A multicast load would call it once per receiving CTA.
  void on_completion(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    if (const TmaCompletion* c = gp.get_extension<TmaCompletion>()) {
      arrived_[c->op_id] = Arrival{*c, sc_core::sc_time_stamp() + delay};  // copy: the extension is the model's
      arrival_.notify(sc_core::SC_ZERO_TIME);
    }
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
  }

  // Sends one command and waits for its completion.
  void issue_and_wait(TmaCommand cmd, Step& s) {
    tlm::tlm_generic_payload gp;
    gp.set_command(tlm::TLM_WRITE_COMMAND);
    gp.set_data_length(0);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    s.issued_at = sc_core::sc_time_stamp();
    {
      ScopedExtension<TmaCommand> ext(gp, &cmd);  // attached for the duration of the call only
      cmd_out->b_transport(gp, delay);            // returns once queued (blocks while the queue is full)
    }
    s.status = gp.get_response_status();
    sc_core::wait(delay);  // this issuer keeps no local time offset: synchronise
    while (!arrived_.count(cmd.op_id)) sc_core::wait(arrival_);
    s.completion = arrived_[cmd.op_id].completion;
    s.completed_at = arrived_[cmd.op_id].at;
  }

  // Runs `cmd` through the model and `map` (the descriptor the unit is expected to use) through
  // the reference engine on copies of the same memory, and compares.
  void checked(const std::string& name, const TmaCommand& cmd, const TensorMap& map) {
    Step& s = steps[name];
    std::vector<uint8_t>& smem = gpu_.unit(sm_).smem().bytes();
    const std::vector<uint8_t> smem_before = smem;
    std::vector<uint8_t> global_before(kTensorBytes);
    gpu_.memory().read(kTensorAddr, global_before.data(), global_before.size());

    // The reference engine sees global memory as one image: map.global_address is an offset into
    // it. Our image starts at the tensor, so the reference's map has global_address 0.
    std::vector<uint8_t> ref_global = global_before, ref_smem = smem_before;
    TensorMap ref_map = map;
    ref_map.global_address = 0;
    ReferenceOptions options;
    options.arch = GpuArch::sm90;
    s.reference = reference_execute(ref_map, cmd.op, ref_global, ref_smem, options);

    issue_and_wait(cmd, s);

    std::vector<uint8_t> global_after(kTensorBytes);
    gpu_.memory().read(kTensorAddr, global_after.data(), global_after.size());
    s.smem_mismatch = first_difference(smem, ref_smem);
    s.global_mismatch = first_difference(global_after, ref_global);
    s.smem_unchanged = smem == smem_before;
    s.global_unchanged = global_after == global_before;
  }

  void write_descriptor(const TensorMap& m) {
    const std::array<uint8_t, kDescriptorBytes> d = encode_descriptor(m);  // throws if a field does not fit
    gpu_.memory().write(kDescriptorAddr, d.data(), d.size());
  }

  void run() {
    // 1. The descriptor: validate first (encode_descriptor only checks that fields fit their slots).
    const TensorMap map = make_map();
    if (auto err = validate_tensor_map(map, GpuArch::sm90)) {
      validation_error = err->rule + ": " + err->message;
      sc_core::sc_stop();
      return;
    }
    TensorMap bad = map;
    bad.strides[0] = 90;  // the driver wants strides that are multiples of 16
    if (auto err = validate_tensor_map(bad, GpuArch::sm90)) refused_rule = err->rule;
    write_descriptor(map);

    // The tensor itself, row padding set to 0xEE.
    std::vector<uint8_t> tensor(kTensorBytes, 0xEE);
    for (uint64_t y = 0; y < kDim1; ++y)
      for (uint64_t x = 0; x < kDim0; ++x) {
        const uint16_t v = element_value(x, y);
        std::memcpy(&tensor[y * kRowPitch + x * 2], &v, 2);
      }
    gpu_.memory().write(kTensorAddr, tensor.data(), tensor.size());

    // 2. Load the box at (x, y) = (-8, 12): x -8..23 and y 12..27, so 8 columns left of the tensor
    //    and 4 rows past its end are OOB fill. Cold descriptor cache: a miss.
    checked("load", tensor_op(OpKind::load, -8, 12, kLoadSmem, 1), map);
    // One value placed by hand (docs/semantics.md): element (0, 14) is box row 2, column 8, logical
    // address 0x400 + 2 * 64 + 8 * 2 = 0x490; 64B swizzle: A ^ (((A >> 7) & 3) << 4) = 0x480.
    const std::vector<uint8_t>& smem = gpu_.unit(sm_).smem().bytes();
    swizzled_spot = static_cast<uint16_t>(smem[0x480] | smem[0x481] << 8);

    // 3. Reduce-add the tile (shared memory as the load left it) at (16, 12): clipped at x = 40 and
    //    y = 24 (the stores' negative-coordinate rule makes a box left of the tensor fault).
    TmaCommand reduce = tensor_op(OpKind::reduce, 16, 12, kLoadSmem, 2);
    reduce.op.reduce = ReduceOp::add;
    checked("reduce_add", reduce, map);

    // 4. Rewrite the descriptor with the 128B swizzle. The unit's descriptor cache still holds the
    //    old bytes, as on hardware: this load must behave as 64B.
    TensorMap map128 = map;
    map128.swizzle = SwizzleMode::b128;
    write_descriptor(map128);
    checked("load_stale_descriptor", tensor_op(OpKind::load, 0, 0, 0x1000, 3), map);
    //    fence.proxy.tensormap: drop the cached copy. It completes like any command (tx_bytes 0).
    TmaCommand inv;
    inv.kind = UnitCommandKind::invalidate_descriptor;
    inv.descriptor_address = kDescriptorAddr;
    inv.op_id = 4;
    issue_and_wait(inv, steps["invalidate"]);
    //    Re-issued: a miss, and the new (128B) descriptor.
    checked("load_after_invalidate", tensor_op(OpKind::load, 0, 0, 0x2000, 5), map128);

    // 5. Shared-memory destination 0x3040: 64-byte aligned, not 128 (docs/semantics.md, "Faults":
    //    the instruction traps). The operation completes with outcome fault and writes nothing.
    //    (A dimension-0 box start that is not 16-byte aligned faults too, but the Scoreboard
    //    attached below misreports that one as a mismatch: docs/integration.md, "OpObserver".)
    checked("fault", tensor_op(OpKind::load, 0, 0, 0x3040, 6), map128);

    sc_core::sc_stop();
  }

  GpuSystem& gpu_;
  uint32_t sm_;
  std::map<uint64_t, Arrival> arrived_;  // by op id
  sc_core::sc_event arrival_;
};

// ------------------------------------------------------------------------------------------------
// The testbench top: the model, the issuer, the observers.
// ------------------------------------------------------------------------------------------------
class Testbench : public sc_core::sc_module {
 public:
  GpuSystem gpu;
  MyIssuer issuer;
  RecordingObserver observer;
  Scoreboard scoreboard;

  Testbench(sc_core::sc_module_name name, const ArchConfig& arch)
      : sc_module(name),
        gpu("gpu", arch, /*sms=*/1, /*cluster_size=*/1, GpuArch::sm90, MemoryFill::zero),
        issuer("issuer", gpu, 0),
        scoreboard(gpu, GpuArch::sm90) {
    issuer.cmd_out.bind(gpu.unit(0).cmd_in);
    gpu.fabric().completion_out.bind(issuer.completion_in);  // the i-th binding receives SM i's completions
    issuer.lsu_out.bind(gpu.unit(0).smem().lsu_in);
    gpu.unit(0).add_observer(&observer);
    gpu.unit(0).add_observer(&scoreboard);
  }
};

Testbench* g_tb = nullptr;
std::map<std::string, StatsRecord> g_stats;

struct RunOnce {
  RunOnce() {
    // The H200 parameters; resolve_project_path finds configs/ in the project's folder.
    auto& suite = boost::unit_test::framework::master_test_suite();
    if (suite.argc > 0) set_executable_path(suite.argv[0]);
    const ArchConfig arch = load_arch_config(resolve_project_path("configs/arch/h200.yaml"));
    static Testbench tb("tb", arch);
    g_tb = &tb;
    sc_core::sc_start();
    tb.gpu.check_drained();  // every accepted operation completed (reports into gpu.invariants())
    g_stats = collect_hierarchy_stats();
  }
};
BOOST_TEST_GLOBAL_FIXTURE(RunOnce);

const Step& step(const std::string& name) {
  auto it = g_tb->issuer.steps.find(name);
  BOOST_REQUIRE_MESSAGE(it != g_tb->issuer.steps.end(), "step " << name << " did not run");
  return it->second;
}

const OpRecord& record(uint64_t op_id) {
  auto it = g_tb->observer.records.find(op_id);
  BOOST_REQUIRE_MESSAGE(it != g_tb->observer.records.end(), "no OpRecord for op " << op_id);
  return it->second;
}

// A counter of one module, by its SystemC path ("tb.gpu.sm0.descriptor_cache").
double stat(const std::string& path, const std::string& name) {
  auto it = g_stats.find(path);
  BOOST_REQUIRE_MESSAGE(it != g_stats.end(), "no statistics for " << path);
  for (const auto& [n, v] : it->second.values())
    if (n == name) return v;
  BOOST_FAIL("no counter " << name << " in " << path);
  return 0;
}

// Common checks of an operation that must succeed and match the reference.
void check_ok_and_matches(const Step& s) {
  BOOST_TEST(s.status == tlm::TLM_OK_RESPONSE);
  BOOST_TEST((s.completion.outcome == OpOutcome::ok));
  BOOST_TEST((s.reference.outcome == Outcome::ok), s.reference.reason);
  BOOST_TEST(s.smem_mismatch.empty(), "shared memory: " << s.smem_mismatch);
  BOOST_TEST(s.global_mismatch.empty(), "global memory: " << s.global_mismatch);
  BOOST_TEST(s.completion.mbarrier == kMbarrier);
  BOOST_TEST(s.completed_at > s.issued_at);
}

}  // namespace

BOOST_AUTO_TEST_CASE(descriptor_validation) {
  BOOST_TEST(g_tb->issuer.validation_error.empty(), g_tb->issuer.validation_error);
  BOOST_TEST(g_tb->issuer.refused_rule == "globalStrides.multiple_of_16");
}

BOOST_AUTO_TEST_CASE(swizzled_load_with_oob_fill_matches_reference) {
  const Step& s = step("load");
  check_ok_and_matches(s);
  // complete_tx counts the whole box, OOB fill included: 16 rows x 32 bf16.
  BOOST_TEST(s.completion.tx_bytes == 16u * 32u * 2u);
  BOOST_TEST(s.completion.tx_bytes == s.reference.tx_bytes);
  BOOST_TEST(!s.smem_unchanged);
  BOOST_TEST(s.global_unchanged);
  BOOST_TEST(g_tb->issuer.swizzled_spot == element_value(0, 14));
  // The completion arrives at the simulated time the unit says the operation is done.
  const OpRecord& r = record(1);
  BOOST_TEST(r.done_cycle > r.start_cycle);
  BOOST_TEST(s.completed_at > sc_core::SC_ZERO_TIME);
  BOOST_TEST(s.completed_at == CycleClock(g_tb->gpu.arch().sm_clock_mhz).to_time(r.done_cycle));
  BOOST_TEST(s.completion.src_sm == 0);
  BOOST_TEST(s.completion.cta == 0);
}

BOOST_AUTO_TEST_CASE(reduction_matches_reference) {
  const Step& s = step("reduce_add");
  check_ok_and_matches(s);
  BOOST_TEST(!s.global_unchanged);
  BOOST_TEST(s.smem_unchanged);          // a reduction only reads shared memory
  BOOST_TEST(s.completion.tx_bytes == 0u);  // only loads report bytes to the mbarrier
}

BOOST_AUTO_TEST_CASE(descriptor_cache_stale_then_invalidated) {
  check_ok_and_matches(step("load_stale_descriptor"));
  check_ok_and_matches(step("load_after_invalidate"));
  const Step& inv = step("invalidate");
  BOOST_TEST((inv.completion.outcome == OpOutcome::ok));
  BOOST_TEST(inv.completion.tx_bytes == 0u);
  // Per operation, from the observer: miss, hit, hit (stale 64B map), [invalidate], miss (128B), hit.
  BOOST_TEST(!record(1).descriptor_hit);
  BOOST_TEST(record(2).descriptor_hit);
  BOOST_TEST(record(3).descriptor_hit);
  BOOST_TEST((record(3).map.swizzle == SwizzleMode::b64));
  BOOST_TEST(!record(5).descriptor_hit);
  BOOST_TEST((record(5).map.swizzle == SwizzleMode::b128));
  BOOST_TEST(record(6).descriptor_hit);
  // The same, from the statistics.
  const std::string unit = g_tb->gpu.unit(0).name();
  BOOST_TEST(stat(unit + ".descriptor_cache", "misses") == 2);
  BOOST_TEST(stat(unit + ".descriptor_cache", "hits") == 3);
  BOOST_TEST(stat(unit + ".descriptor_cache", "invalidations") == 1);
  BOOST_TEST(stat(unit, "descriptor_invalidations") == 1);
}

BOOST_AUTO_TEST_CASE(misaligned_smem_address_faults_without_writing) {
  const Step& s = step("fault");
  BOOST_TEST(s.status == tlm::TLM_OK_RESPONSE);  // a fault is an outcome, not a TLM error
  BOOST_TEST((s.completion.outcome == OpOutcome::fault));
  BOOST_TEST((s.reference.outcome == Outcome::fault));
  BOOST_TEST(s.completion.tx_bytes == 0u);
  BOOST_TEST(s.smem_unchanged);
  BOOST_TEST(s.global_unchanged);
  BOOST_TEST(s.completed_at > s.issued_at);
  // The completion and the observer's record both carry the reason.
  BOOST_TEST(s.completion.fault_reason == "shared-memory address not 128-byte aligned");
  BOOST_TEST(record(6).fault_reason == "shared-memory address not 128-byte aligned");
}

BOOST_AUTO_TEST_CASE(observer_scoreboard_and_counters) {
  BOOST_TEST(g_tb->observer.records.size() == 5u);  // the tensor operations; not the invalidate
  BOOST_TEST(g_tb->scoreboard.checked() == 5u);
  BOOST_TEST(g_tb->scoreboard.mismatches() == 0u);
  for (const std::string& r : g_tb->scoreboard.reports()) BOOST_TEST_MESSAGE(r);
  // What each step saw (shown with --log_level=message).
  for (const auto& [name, s] : g_tb->issuer.steps)
    BOOST_TEST_MESSAGE(name << ": issued at " << s.issued_at << ", completed at " << s.completed_at << ", tx_bytes "
                            << s.completion.tx_bytes << ", outcome "
                            << (s.completion.outcome == OpOutcome::ok ? "ok" : "fault"));
  const std::string unit = g_tb->gpu.unit(0).name();
  BOOST_TEST(stat(unit, "commands_accepted") == 6);
  BOOST_TEST(stat(unit, "loads") == 4);
  BOOST_TEST(stat(unit, "reductions") == 1);
  BOOST_TEST(stat(unit, "faults") == 1);
  BOOST_TEST(stat(unit, "bytes_loaded") == 3 * 16 * 32 * 2);
}

BOOST_AUTO_TEST_CASE(model_invariants_hold) {
  const InvariantLog& inv = g_tb->gpu.invariants();
  BOOST_TEST(inv.checks() > 0u);
  BOOST_TEST(inv.violations() == 0u);
  for (const std::string& v : inv.first_violations()) BOOST_TEST_MESSAGE(v);
}
