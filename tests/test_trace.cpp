// Traces (tb/trace.h, docs/traces.md): write_trace then load_trace gives back the same scenario
// (tensors, descriptors at the same addresses, SMs, clusters, the L2 at launch, the stage ring)
// and the same launch, field by field (every CTA's SM, prologue, steps, operations, waits, reads),
// for every shipped scenario and the schedules, waves and forms that change what a trace holds.
// The timed round trip (the same statistics) is tests/scripts/trace_test.sh.
#define BOOST_TEST_MODULE trace
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tma/config/arch_config_yaml.h"
#include "tma/scenario/scenario.h"
#include "tma/scenario/trace.h"
#include "tma/scenario/workload.h"
#include "tma/config/yaml_reader.h"

#include "shipped_configs.h"

using namespace tma;

// SystemC's library wants an sc_main; Boost.Test provides main.
int sc_main(int, char**) { return 0; }

namespace {

using test::kRoot;
using test::h100;

std::string temp_file(const std::string& what) {
  return (std::filesystem::temp_directory_path() / ("tma_test_trace_" + what + "_" + std::to_string(getpid()) + ".jsonl"))
      .string();
}

bool same_op(const IssueOp& a, const IssueOp& b) {
  const TmaCommand &x = a.cmd, &y = b.cmd;
  return x.kind == y.kind && x.descriptor_address == y.descriptor_address &&
         x.descriptor_in_param == y.descriptor_in_param && x.cta_mask == y.cta_mask && x.op.kind == y.op.kind &&
         x.op.reduce == y.op.reduce && x.op.coords == y.op.coords && x.op.im2col_offsets == y.op.im2col_offsets &&
         x.op.w_halo == y.op.w_halo && x.op.w_offset == y.op.w_offset && x.op.smem_addr == y.op.smem_addr;
}

bool same_ops(const std::vector<IssueOp>& a, const std::vector<IssueOp>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same_op(a[i], b[i])) return false;
  return true;
}

bool same_step(const Step& a, const Step& b) {
  if (a.reads.size() != b.reads.size()) return false;
  for (size_t i = 0; i < a.reads.size(); ++i) {
    const TileRead &x = a.reads[i], &y = b.reads[i];
    if (x.smem_addr != y.smem_addr || x.rows != y.rows || x.row_bytes != y.row_bytes || x.pitch != y.pitch ||
        x.swizzle != y.swizzle || x.atom != y.atom)
      return false;
  }
  return same_ops(a.loads, b.loads) && same_ops(a.after, b.after) && a.expected_completions == b.expected_completions &&
         a.compute_cycles == b.compute_cycles && a.bulk_wait_pending == b.bulk_wait_pending &&
         a.bulk_wait_after == b.bulk_wait_after && a.release_wait_from == b.release_wait_from;
}

// Exports the scenario's launch, reads it back, and compares everything.
void round_trip(const std::string& name, const std::vector<std::string>& sets) {
  BOOST_TEST_CONTEXT(name) {
    const std::string path = kRoot + (name.find('/') == std::string::npos ? "/configs/scenarios/" + name + ".yaml" : name);
    const Scenario s = load_scenario(path, sets);
    const Launch l = build_launch(s, h100());
    const std::string file = temp_file("round_trip");
    {
      std::ofstream out(file);
      write_trace(out, s, l, kRoot + "/configs/arch/h100.yaml");
    }
    const Trace t = load_trace(file);
    std::remove(file.c_str());
    const Scenario& r = t.scenario;
    BOOST_TEST(r.name == s.name);
    BOOST_TEST(r.sms == s.sms);
    BOOST_TEST(r.cluster_size == s.cluster_size);
    BOOST_TEST((r.gpu == s.gpu && r.memory_fill == s.memory_fill && r.l2_state == s.l2_state));
    BOOST_TEST(r.l2_dirty_bytes == s.l2_dirty_bytes);
    BOOST_TEST(r.arch == kRoot + "/configs/arch/h100.yaml");
    BOOST_TEST(r.workload.stages == s.workload.stages);
    BOOST_TEST((r.workload.kind == WorkloadKind::trace));
    BOOST_REQUIRE(r.tensors.size() == s.tensors.size());
    for (const auto& [tn, tensor] : s.tensors) {
      const ScenarioTensor& u = r.tensors.at(tn);
      BOOST_TEST((u.dtype == tensor.dtype && u.dims == tensor.dims && u.strides == tensor.strides &&
                  u.address == tensor.address));
    }
    BOOST_REQUIRE(r.descriptors.size() == s.descriptors.size());
    for (const auto& [dn, d] : s.descriptors) {
      const ScenarioDescriptor& e = r.descriptors.at(dn);
      BOOST_TEST((e.map == d.map));
      BOOST_TEST(e.address == d.address);  // descriptor fetches go to the same lines
      BOOST_TEST(e.kernel_param == d.kernel_param);
      BOOST_TEST(e.tensor == d.tensor);
    }
    BOOST_TEST(t.launch.sm == l.sm);
    BOOST_TEST(t.launch.ctas_per_sm == l.ctas_per_sm);
    BOOST_TEST(t.launch.setup_cycles == l.setup_cycles);
    BOOST_TEST(t.launch.issue_cycles == l.issue_cycles);
    BOOST_TEST(t.launch.handoff_cycles == l.handoff_cycles);
    BOOST_TEST(t.launch.warps_per_cta == l.warps_per_cta);
    BOOST_REQUIRE(t.launch.ctas.size() == l.ctas.size());
    size_t steps = 0;
    for (size_t c = 0; c < l.ctas.size(); ++c) {
      const CtaProgram &a = l.ctas[c], &b = t.launch.ctas[c];
      BOOST_TEST(same_ops(a.prologue, b.prologue), "CTA " << c << " prologue");
      BOOST_REQUIRE(a.steps.size() == b.steps.size());
      for (size_t i = 0; i < a.steps.size(); ++i) BOOST_TEST(same_step(a.steps[i], b.steps[i]), "CTA " << c << " step " << i);
      steps += a.steps.size();
    }
    BOOST_TEST(steps > 0u);
  }
}

std::string error_of(const std::string& text) {
  const std::string file = temp_file("bad");
  {
    std::ofstream out(file);
    out << text;
  }
  std::string what;
  try {
    load_trace(file);
  } catch (const YamlError& e) {
    what = std::to_string(e.line()) + " " + e.field();
  }
  std::remove(file.c_str());
  return what;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_shipped_scenario_round_trips) {
  const std::vector<std::string> gemm = {"sms=8", "workload.m=512", "workload.n=512"};
  round_trip("gemm_bf16", gemm);
  round_trip("gemm_multicast", gemm);
  round_trip("conv_im2col", {"sms=8", "workload.max_tiles_per_sm=2", "workload.consumer_reads=true"});
  round_trip("stream_tiles", {"sms=4", "workload.max_tiles_per_sm=4", "l2_state=dirty", "l2_dirty_bytes=4096"});
  round_trip("stream_tiles", {"sms=4", "workload.max_tiles_per_sm=4", "workload.setup_cycles=2340",
                              "workload.issue_cycles=447", "workload.handoff_cycles=126"});
  round_trip("stream_tiles", {"sms=2", "workload.max_tiles_per_sm=8", "workload.ctas_per_sm=3", "workload.warps_per_cta=2"});
  round_trip("stream_reduce", {"sms=4", "workload.max_tiles_per_sm=4", "descriptors.C_tile.location=global"});
  round_trip("stream_store", {"workload.reduce=max"});
  round_trip("stream_multicast", {"workload.multicast_issuer=rotate", "workload.consumer_reads=true"});
  round_trip("attention_fwd", {"sms=8", "tensors.Q.dims=[128, 512, 4, 1]", "tensors.O.dims=[128, 512, 4, 1]",
                               "tensors.K.dims=[128, 512, 2, 1]", "tensors.V.dims=[128, 512, 2, 1]"});
  round_trip("decode", {"sms=8"});
  round_trip("/tests/fuzz/seeds/scenario/ops_with_overrides.yaml", {});
  // Waves (CTAs for the first SM free), CUTLASS's padding, a warm L2.
  std::vector<std::string> waves = gemm;
  waves.push_back("workload.schedule={persistent: false, swizzle: 4}");
  waves.push_back("l2_state=warm");
  round_trip("gemm_bf16", waves);
}

BOOST_AUTO_TEST_CASE(bad_headers_and_lines_are_named) {
  const std::string head =
      R"({"format":"tma-trace","version":1,"scenario":{"name":"t","sms":2,"tensors":{"T":{"dtype":"bf16","dims":[64,64],"address":4096}},)"
      R"("descriptors":{"D":{"tensor":"T","box":[64,64]}}},"stages":2,"grid":[0,1]})"
      "\n";
  const std::string load =
      R"({"cta":0,"sm":0,"step":0,"issue":"producer","op":"load","descriptor":"D","coords":[0,0],"smem_addr":0,"wait":"stage","stage":0,"phase":0,"expects":1,"compute_cycles":0})"
      "\n";
  BOOST_TEST(error_of(head + load).empty());
  BOOST_TEST(error_of("").find("0 ") == 0u);  // empty file: no line
  BOOST_TEST(error_of(R"({"format":"tma-trace","version":1,"stages":2,"grid":[0]})" "\n") == "1 ");  // no scenario
  BOOST_TEST(error_of(head + R"({"cta":2,"sm":0})" "\n") == "2 cta");
  BOOST_TEST(error_of(head + load + R"({"cta":1,"sm":null})" "\n") == "3 sm");
  // Step 0 again is its second load, but the step expects one completion: refused at its first line.
  BOOST_TEST(error_of(head + load + load) == "2 expects");
  std::string again = load;
  again.replace(again.find("\"step\":0"), 8, "\"step\":1");  // step 1 must be in stage 1
  BOOST_TEST(error_of(head + load + again) == "3 stage");
  std::string wait = load;
  wait.replace(wait.find("\"wait\":\"stage\""), 14, "\"wait\":\"soon\"");
  BOOST_TEST(error_of(head + wait) == "2 wait");
  std::string store = load;
  store.replace(store.find("\"issue\":\"producer\""), 18, "\"issue\":\"consumer\"");
  BOOST_TEST(error_of(head + store) == "2 op");  // the consumer issues no loads
  BOOST_TEST(error_of(head + "not json\n") == "2 ");
  std::string setup = head;
  setup.insert(setup.rfind('}'), R"(,"setup_cycles":-5)");
  BOOST_TEST(error_of(setup + load) == "1 setup_cycles");
  std::string issue = head;
  issue.insert(issue.rfind('}'), R"(,"issue_cycles":"often")");
  BOOST_TEST(error_of(issue + load) == "1 issue_cycles");
  std::string handoff = head;
  handoff.insert(handoff.rfind('}'), R"(,"handoff_cycles":1.5)");
  BOOST_TEST(error_of(handoff + load) == "1 handoff_cycles");
  std::string warps = head;
  warps.insert(warps.rfind('}'), R"(,"warps_per_cta":0)");
  BOOST_TEST(error_of(warps + load) == "1 warps_per_cta");
}
