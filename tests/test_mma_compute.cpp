// Compute per step from the architecture (docs/scenarios.md, "Compute per step"): a gemm or conv
// workload without compute_cycles spends 2 x BM x BN x BK flops per step at the SM's dense MMA
// rate for its operand type (ArchConfig::sm); an explicit compute_cycles wins. Checked on the
// programs build_launch makes and on one timed run (the consumer really waits that long).
#define BOOST_TEST_MODULE mma_compute
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "tma/config/arch_config_yaml.h"
#include "run_in_child.h"
#include "tma/scenario/scenario.h"
#include "tma/scenario/workload.h"
#include "tma/config/yaml_reader.h"

#include "shipped_configs.h"

using namespace tma;

// SystemC's library wants an sc_main; Boost.Test provides main.
int sc_main(int, char**) { return 0; }

namespace {

using test::scenario;
using test::arch;

// The compute_cycles of every step of every CTA (one value expected).
std::set<uint32_t> step_cycles(const Scenario& s, const ArchConfig& a) {
  std::set<uint32_t> out;
  for (const CtaProgram& p : build_launch(s, a).ctas)
    for (const Step& st : p.steps) out.insert(st.compute_cycles);
  return out;
}

std::string error_field(const std::string& name, const std::vector<std::string>& sets) {
  try {
    scenario(name, sets);
  } catch (const YamlError& e) {
    return e.field();
  }
  return "";
}

const std::vector<std::string> kSmall = {"sms=4", "workload.m=256", "workload.n=256"};

std::vector<std::string> small(std::vector<std::string> more) {
  more.insert(more.begin(), kSmall.begin(), kSmall.end());
  return more;
}

}  // namespace

BOOST_AUTO_TEST_CASE(architecture_rates_are_the_datasheets) {
  // H100 SXM: 989.4 TFLOP/s dense bf16 over 132 SMs at the 1.83 GHz of that figure; fp8 twice,
  // tf32 half. The H200 has the same SM.
  for (const char* name : {"h100", "h200"}) {
    const ArchConfig a = arch(name);
    BOOST_TEST(a.sm.mma_flops_per_cycle_bf16 == std::round(989.4e12 / (132 * 1.83e9)));
    BOOST_TEST(a.sm.mma_flops_per_cycle_fp8 == std::round(1978.9e12 / (132 * 1.83e9)));
    BOOST_TEST(a.sm.mma_flops_per_cycle_tf32 == std::round(494.7e12 / (132 * 1.83e9)));
  }
  // The fields are the architecture's like any other: overridable, in range.
  ArchConfig a = arch();
  apply_arch_overrides(a, {"sm.mma_flops_per_cycle_bf16=2048"});
  BOOST_TEST(a.sm.mma_flops_per_cycle_bf16 == 2048u);
  BOOST_CHECK_THROW(apply_arch_overrides(a, {"sm.mma_flops_per_cycle_bf16=0"}), std::exception);
}

BOOST_AUTO_TEST_CASE(gemm_step_from_the_architecture) {
  const ArchConfig h100 = arch();
  // The default job: 128 x 128 x 64 bf16 per step, 2 x 128 x 128 x 64 / 4096 = 512 cycles.
  const Scenario def = scenario("gemm_bf16", kSmall);
  BOOST_TEST(!def.workload.compute_cycles.has_value());
  BOOST_TEST(step_cycles(def, h100) == std::set<uint32_t>{512});
  // The rate follows the architecture...
  ArchConfig slow = h100;
  slow.sm.mma_flops_per_cycle_bf16 = 1000;  // 2097152 / 1000 = 2097.152: whole cycles, up
  BOOST_TEST(step_cycles(def, slow) == std::set<uint32_t>{2098});
  // ...and the operand type: mma_dtype, else the A tensor's data type.
  BOOST_TEST(step_cycles(scenario("gemm_bf16", small({"workload.mma_dtype=fp8"})), h100) == std::set<uint32_t>{256});
  BOOST_TEST(step_cycles(scenario("gemm_bf16", small({"workload.mma_dtype=tf32"})), h100) == std::set<uint32_t>{1024});
  BOOST_TEST(step_cycles(scenario("gemm_bf16", small({"workload.mma_dtype=fp16"})), h100) == std::set<uint32_t>{512});
  const std::vector<std::string> u8 = {"tensors.A.dtype=u8", "tensors.B.dtype=u8"};  // fp8 or int8
  BOOST_TEST(step_cycles(scenario("gemm_bf16", small(u8)), h100) == std::set<uint32_t>{256});  // 2*128*128*64 / 8192
  const std::vector<std::string> f32 = {"tensors.A.dtype=f32", "tensors.B.dtype=f32", "descriptors.A_tile.box=[32, 128]",
                                        "descriptors.B_tile.box=[32, 128]"};
  BOOST_TEST(step_cycles(scenario("gemm_bf16", small(f32)), h100) == std::set<uint32_t>{512});  // 2*128*128*32 / 2048
  // An explicit compute_cycles wins, 0 included.
  BOOST_TEST(step_cycles(scenario("gemm_bf16", small({"workload.compute_cycles=128"})), h100) == std::set<uint32_t>{128});
  BOOST_TEST(step_cycles(scenario("gemm_bf16", small({"workload.compute_cycles=0"})), h100) == std::set<uint32_t>{0});
  BOOST_TEST(step_cycles(scenario("gemm_multicast", {"sms=4", "workload.m=256", "workload.n=256"}), h100) ==
             std::set<uint32_t>{512});
}

BOOST_AUTO_TEST_CASE(conv_and_stream_steps) {
  const ArchConfig h100 = arch();
  // 128 pixels x 64 channels x 128 filters per step.
  BOOST_TEST(step_cycles(scenario("conv_im2col", {"sms=2", "workload.max_tiles_per_sm=1"}), h100) ==
             std::set<uint32_t>{512});
  BOOST_TEST(step_cycles(scenario("conv_im2col", {"sms=2", "workload.max_tiles_per_sm=1", "workload.compute_cycles=7"}),
                         h100) == std::set<uint32_t>{7});
  // A stream does no math unless told.
  BOOST_TEST(step_cycles(scenario("stream_store"), h100) == std::set<uint32_t>{0});
  BOOST_TEST(step_cycles(scenario("stream_store", {"workload.compute_cycles=50"}), h100) == std::set<uint32_t>{50});
}

BOOST_AUTO_TEST_CASE(operand_type_must_be_known_without_compute_cycles) {
  const std::vector<std::string> u32 = {"tensors.A.dtype=u32", "tensors.B.dtype=u32", "descriptors.A_tile.box=[32, 128]",
                                        "descriptors.B_tile.box=[32, 128]"};
  BOOST_TEST(error_field("gemm_bf16", u32) == "workload.mma_dtype");
  std::vector<std::string> with = u32;
  with.push_back("workload.compute_cycles=100");
  BOOST_TEST(error_field("gemm_bf16", with).empty());
  with.back() = "workload.mma_dtype=tf32";
  BOOST_TEST(error_field("gemm_bf16", with).empty());
  BOOST_TEST(error_field("gemm_bf16", {"workload.mma_dtype=fp4"}) == "workload.mma_dtype");
}

BOOST_AUTO_TEST_CASE(the_consumer_spends_the_derived_cycles) {
  // One SM, 2 x 2 output tiles of 16 K steps: the consumer computes 64 steps of 512 cycles one
  // after another, the loads hidden behind them but for the first stage's.
  const Scenario s = scenario("gemm_bf16", {"sms=1", "workload.m=256", "workload.n=256"});
  const test::Result r = test::run_in_child(s, arch());
  BOOST_TEST(r.loads == 128u);
  BOOST_TEST(r.scoreboard_mismatches == 0u);
  BOOST_TEST(r.cycles >= 64 * 512u);
  BOOST_TEST(r.cycles < 64 * 512u + 5000, r.cycles << " cycles");
}
