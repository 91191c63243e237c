// The attention workload, FlashAttention-3's forward pass and split-KV decode (docs/scenarios.md,
// configs/scenarios/attention_fwd.yaml, decode.yaml): the operation sequences build_launch makes,
//   - how many K, V and Q loads an item makes, with and without causal masking (bottom-right
//     aligned when seq_kv > seq_q), and in which order (the last KV block first, Q once, in the
//     item's first step, after its K and behind the release of the last item's steps);
//   - which K/V rows a grouped-query head reads (query head h reads KV head h / (heads/kv_heads));
//   - split-KV: each split's share of the blocks, its partial output's place;
//   - the work items' order and the compute per step;
// what the reader refuses, and two timed runs: the scoreboard on a small case of each, and Q of
// the next item waiting for the last item's consumer.
#define BOOST_TEST_MODULE attention
#include <boost/test/unit_test.hpp>

#include <map>
#include <string>
#include <tuple>
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
using test::h100;

std::string error_field(const std::string& name, const std::vector<std::string>& sets) {
  try {
    scenario(name, sets);
  } catch (const YamlError& e) {
    return e.field();
  }
  return "";
}

// attention_fwd made small: batch 1, `heads` query heads over `kv_heads`, seq_q and seq_kv tokens
// (128-token blocks, head_dim 128 as two 64-column boxes), on `sms` SMs.
Scenario small(uint64_t seq_q, uint64_t seq_kv, uint64_t heads, uint64_t kv_heads, bool causal, uint32_t sms = 4,
               std::vector<std::string> more = {}) {
  auto dims = [](uint64_t seq, uint64_t h) {
    return "[128, " + std::to_string(seq) + ", " + std::to_string(h) + ", 1]";
  };
  std::vector<std::string> sets = {"sms=" + std::to_string(sms),
                                   "tensors.Q.dims=" + dims(seq_q, heads),
                                   "tensors.O.dims=" + dims(seq_q, heads),
                                   "tensors.K.dims=" + dims(seq_kv, kv_heads),
                                   "tensors.V.dims=" + dims(seq_kv, kv_heads),
                                   std::string("workload.causal=") + (causal ? "true" : "false")};
  sets.insert(sets.end(), more.begin(), more.end());
  return scenario("attention_fwd", sets);
}

// One load or store of a program: which descriptor (by address), its coordinates.
struct Op {
  std::string desc;
  int32_t c0, row, head, batch;
};

std::map<uint64_t, std::string> names(const Scenario& s) {
  std::map<uint64_t, std::string> out;
  for (const auto& [name, d] : s.descriptors) out[d.address] = name;
  return out;
}

Op op(const Scenario& s, const IssueOp& io) {
  const auto& c = io.cmd.op.coords;
  return {names(s).at(io.cmd.descriptor_address), c[0], c[1], c[2], c[3]};
}

// Counts of loads per descriptor over a whole launch.
std::map<std::string, uint64_t> load_counts(const Scenario& s, const Launch& l) {
  std::map<std::string, uint64_t> out;
  for (const CtaProgram& p : l.ctas)
    for (const Step& st : p.steps)
      for (const IssueOp& io : st.loads) ++out[op(s, io).desc];
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(loads_with_and_without_causal_masking) {
  const ArchConfig arch = h100();
  // 4 query blocks, 4 KV blocks, 2 heads: every item reads all 4 KV blocks; each tile is two boxes.
  const Scenario full = small(512, 512, 2, 2, false);
  const auto nc = load_counts(full, build_launch(full, arch));
  BOOST_TEST(nc.at("Q_tile") == 2u * 4 * 2);      // heads x query blocks x boxes
  BOOST_TEST(nc.at("K_tile") == 2u * 4 * 4 * 2);  // x KV blocks
  BOOST_TEST(nc.at("V_tile") == 2u * 4 * 4 * 2);
  // Causal: query block m reads KV blocks 0..m: 1 + 2 + 3 + 4 = 10 per head.
  const Scenario causal = small(512, 512, 2, 2, true);
  const auto c = load_counts(causal, build_launch(causal, arch));
  BOOST_TEST(c.at("Q_tile") == 2u * 4 * 2);
  BOOST_TEST(c.at("K_tile") == 2u * 10 * 2);
  BOOST_TEST(c.at("V_tile") == 2u * 10 * 2);
  // seq_kv > seq_q: the diagonal is aligned to the bottom right; query block m of 2 reads
  // KV blocks 0..m+2 (of 4): 3 + 4.
  const Scenario br = small(256, 512, 1, 1, true);
  BOOST_TEST(load_counts(br, build_launch(br, arch)).at("K_tile") == 7u * 2);
  // A causal item with seq_q = seq_kv = 3 blocks + a part: the last block is partial.
  const Scenario part = small(320, 320, 1, 1, true);
  BOOST_TEST(load_counts(part, build_launch(part, arch)).at("K_tile") == (1u + 2 + 3) * 2);
}

BOOST_AUTO_TEST_CASE(an_items_steps_in_order) {
  const ArchConfig arch = h100();
  // One head, 2 query blocks, 3 KV blocks, causal (seq_kv > seq_q: block 0 reads 0..1, block 1
  // reads 0..2), one SM: the longest item (query block 1) first.
  const Scenario s = small(256, 384, 1, 1, true, 1);
  const Launch l = build_launch(s, arch);
  BOOST_REQUIRE(l.ctas.size() == 1u);
  const std::vector<Step>& steps = l.ctas[0].steps;
  BOOST_REQUIRE(steps.size() == 3u + 2u);
  // Item 1 (query rows 128..255): KV blocks 2, 1, 0; item 0: 1, 0.
  const std::vector<int32_t> kv_rows = {256, 128, 0, 128, 0};
  const std::vector<int32_t> q_rows = {128, 128, 128, 0, 0};
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& st = steps[i];
    const bool first = i == 0 || i == 3;
    // K (two boxes), Q (two boxes, the item's first step only), V (two boxes).
    BOOST_REQUIRE(st.loads.size() == (first ? 6u : 4u));
    BOOST_TEST(st.expected_completions == st.loads.size());
    std::vector<std::string> kinds;
    for (const IssueOp& io : st.loads) {
      const Op o = op(s, io);
      kinds.push_back(o.desc);
      BOOST_TEST(o.row == (o.desc == "Q_tile" ? q_rows[i] : kv_rows[i]));
      BOOST_TEST((o.c0 == 0 || o.c0 == 64));
    }
    const std::vector<std::string> want =
        first ? std::vector<std::string>{"K_tile", "K_tile", "Q_tile", "Q_tile", "V_tile", "V_tile"}
              : std::vector<std::string>{"K_tile", "K_tile", "V_tile", "V_tile"};
    BOOST_TEST(kinds == want);
    // Q waits for the release of every earlier step (its buffer), K and V only for their stage.
    BOOST_TEST(st.release_wait_from == (first ? 2u : kNoReleaseWait));
    // The output tile goes out after the item's last step.
    const bool last = i == 2 || i == 4;
    BOOST_REQUIRE(st.after.size() == (last ? 2u : 0u));
    for (const IssueOp& io : st.after) {
      BOOST_TEST((io.cmd.op.kind == OpKind::store));
      BOOST_TEST(op(s, io).desc == "O_tile");
      BOOST_TEST(op(s, io).row == q_rows[i]);
    }
    // 4 x 128 x 128 x 128 flops at 4096 a cycle.
    BOOST_TEST(st.compute_cycles == 2048u);
  }
  // Q lives outside the ring (2 stages of K and V: 2 x 4 boxes of 16 KB), the stages alternate.
  BOOST_TEST(steps[0].loads[2].cmd.op.smem_addr == 2u * 4 * 16384);
  BOOST_TEST(steps[0].loads[0].cmd.op.smem_addr == 0u);
  BOOST_TEST(steps[1].loads[0].cmd.op.smem_addr == 4u * 16384);
  BOOST_TEST(steps[0].loads[4].cmd.op.smem_addr == 2u * 16384);  // V after the stage's K boxes
}

BOOST_AUTO_TEST_CASE(grouped_query_heads_read_their_kv_head) {
  const ArchConfig arch = h100();
  // 8 query heads over 2 KV heads: heads 0-3 read KV head 0, 4-7 KV head 1.
  const Scenario s = small(128, 256, 8, 2, false, 8);
  const Launch l = build_launch(s, arch);
  uint64_t items = 0;
  for (const CtaProgram& p : l.ctas)
    for (const Step& st : p.steps) {
      int32_t q_head = -1;
      for (const IssueOp& io : st.loads)
        if (op(s, io).desc == "Q_tile") q_head = op(s, io).head;
      if (q_head < 0) continue;  // not an item's first step
      ++items;
      for (const IssueOp& io : st.loads)
        if (op(s, io).desc != "Q_tile") BOOST_TEST(op(s, io).head == q_head / 4);
    }
  BOOST_TEST(items == 8u);
  // Every step of every item (one item per CTA here, 2 KV blocks) reads the KV head of its
  // item's query head.
  for (const CtaProgram& p : l.ctas) {
    BOOST_REQUIRE(p.steps.size() == 2u);
    const int32_t q_head = op(s, p.steps[0].loads.at(2)).head;
    for (const Step& st : p.steps)
      for (const IssueOp& io : st.loads)
        if (op(s, io).desc != "Q_tile") BOOST_TEST(op(s, io).head == q_head / 4);
  }
}

BOOST_AUTO_TEST_CASE(work_items_in_flash_attention_order) {
  const ArchConfig arch = h100();
  // 3 query blocks x 2 heads over 6 SMs: one item each, query block fastest; causal reverses it.
  auto first_q = [&](const Scenario& s) {
    std::vector<std::pair<int32_t, int32_t>> out;  // (head, row) of each CTA's Q
    for (const CtaProgram& p : build_launch(s, arch).ctas)
      for (const IssueOp& io : p.steps.at(0).loads)
        if (op(s, io).desc == "Q_tile" && op(s, io).c0 == 0) out.emplace_back(op(s, io).head, op(s, io).row);
    return out;
  };
  const std::vector<std::pair<int32_t, int32_t>> plain = {{0, 0}, {0, 128}, {0, 256}, {1, 0}, {1, 128}, {1, 256}};
  const std::vector<std::pair<int32_t, int32_t>> lpt = {{0, 256}, {0, 128}, {0, 0}, {1, 256}, {1, 128}, {1, 0}};
  BOOST_TEST(first_q(small(384, 384, 2, 2, false, 6)) == plain);
  BOOST_TEST(first_q(small(384, 384, 2, 2, true, 6)) == lpt);
  // Not persistent: one CTA per item, in the same order.
  const Launch waves = build_launch(small(384, 384, 2, 2, true, 2, {"workload.schedule={persistent: false}"}), arch);
  BOOST_TEST(waves.ctas.size() == 6u);
}

BOOST_AUTO_TEST_CASE(split_kv_decode) {
  const ArchConfig arch = h100();
  const Scenario s = scenario("decode");
  BOOST_TEST(s.workload.decode);
  BOOST_TEST(s.workload.split_kv == 4u);
  const Launch l = build_launch(s, arch);
  // 4 sequences x 8 KV heads (4 query heads each, one box) x 4 splits = 128 items, one per SM.
  uint64_t items = 0;
  std::map<std::tuple<int32_t, int32_t, int32_t>, std::vector<int32_t>> rows;  // (batch, head, split) -> K rows
  for (const CtaProgram& p : l.ctas) {
    if (p.steps.empty()) continue;
    ++items;
    BOOST_REQUIRE(p.steps.size() == 8u);  // 4096 keys / 4 splits / 128
    const Op q = op(s, p.steps[0].loads.at(2));
    BOOST_TEST(q.desc == "Q_tile");
    BOOST_TEST(q.head % 4 == 0);
    std::vector<int32_t> k_rows;
    for (const Step& st : p.steps) {
      BOOST_TEST(st.compute_cycles == 1024u);  // 4 x 64 (a wgmma's rows, not 4) x 128 x 128 / 4096
      const Op k = op(s, st.loads.at(0));
      BOOST_TEST(k.desc == "K_tile");
      BOOST_TEST(k.head == q.head / 4);
      BOOST_TEST(k.batch == q.batch);
      k_rows.push_back(k.row);
    }
    // The partial output of (batch, split) lands at batch x 4 + split.
    const int32_t split = k_rows.back() / 1024;
    const Op o = op(s, p.steps.back().after.at(0));
    BOOST_TEST(o.desc == "O_tile");
    BOOST_TEST(o.batch == q.batch * 4 + split);
    BOOST_TEST(o.head == q.head);
    rows[{q.batch, q.head, split}] = k_rows;
  }
  BOOST_TEST(items == 128u);
  BOOST_TEST(rows.size() == 128u);
  // Split 2 of a sequence reads keys 2048..3071, last block first.
  const std::vector<int32_t> split2 = {2944, 2816, 2688, 2560, 2432, 2304, 2176, 2048};
  BOOST_TEST(rows.at({1, 4, 2}) == split2);
}

BOOST_AUTO_TEST_CASE(reader_refuses_with_the_field_named) {
  BOOST_TEST(error_field("decode", {"workload.causal=true"}) == "workload.causal");
  BOOST_TEST(error_field("decode", {"workload.split_kv=33"}) == "workload.split_kv");
  BOOST_TEST(error_field("decode", {"workload.kind=attention", "workload.split_kv=0"}) == "workload.split_kv");
  // A decode workload has one query block.
  BOOST_TEST(error_field("decode", {"tensors.Q.dims=[128, 2, 32, 4]"}) == "workload.q");
  // K and V agree; the heads group; Q's box takes query heads of one KV head.
  BOOST_TEST(error_field("attention_fwd", {"descriptors.V_tile.box=[64, 64, 1, 1]"}) == "workload.v");
  BOOST_TEST(error_field("attention_fwd", {"tensors.K.dims=[128, 2048, 3, 2]", "tensors.V.dims=[128, 2048, 3, 2]"}) ==
             "workload.k");
  BOOST_TEST(error_field("decode", {"descriptors.Q_tile.box=[64, 1, 8, 1]"}) == "workload.q");
  BOOST_TEST(error_field("attention_fwd", {"descriptors.Q_tile.box=[32, 128, 1, 1]"}) == "workload.k");
  // Causal needs seq_kv >= seq_q; the output holds every split's partial output.
  BOOST_TEST(error_field("attention_fwd", {"tensors.K.dims=[128, 1024, 4, 2]", "tensors.V.dims=[128, 1024, 4, 2]"}) ==
             "workload.causal");
  BOOST_TEST(error_field("decode", {"workload.split_kv=8"}) == "workload.o");
  BOOST_TEST(error_field("attention_fwd", {"descriptors.K_tile.box=[64, 128, 2, 1]", "descriptors.V_tile.box=[64, 128, 2, 1]"}) ==
             "workload.k");
  BOOST_TEST(error_field("attention_fwd", {"workload.schedule={swizzle: 2}"}) == "workload.schedule.swizzle");
  BOOST_TEST(error_field("attention_fwd", {"workload.tile_order=column_major"}) == "workload.tile_order");
  // Accepted: no output, not causal, not persistent.
  BOOST_TEST(error_field("attention_fwd", {"workload.o=~", "workload.causal=false", "workload.schedule={persistent: false}"})
                 .empty());
}

BOOST_AUTO_TEST_CASE(small_runs_pass_the_scoreboard) {
  const ArchConfig arch = h100();
  const test::Result a = test::run_in_child(small(512, 512, 4, 2, true, 4), arch);
  BOOST_TEST(a.loads == 4u * 4 * 2 + 4u * 10 * 4);  // per head: Q of 4 blocks, K and V of 10 (2 boxes each)
  BOOST_TEST(a.stores == 4u * 4 * 2);
  BOOST_TEST(a.scoreboard_checked == a.loads + a.stores);
  BOOST_TEST(a.scoreboard_mismatches == 0u);
  BOOST_TEST(a.invariant_violations == 0u);
  const test::Result d = test::run_in_child(scenario("decode", {"sms=8", "tensors.K.dims=[128, 1024, 8, 4]",
                                                                "tensors.V.dims=[128, 1024, 8, 4]"}),
                                            arch);
  BOOST_TEST(d.loads == 128u * (2 + 2 * 2 * 2));  // per item: Q, and 2 KV blocks of K and V
  BOOST_TEST(d.stores == 128u * 2);
  BOOST_TEST(d.scoreboard_mismatches == 0u);
  BOOST_TEST(d.invariant_violations == 0u);
}

BOOST_AUTO_TEST_CASE(next_q_waits_for_the_last_items_consumer) {
  // One SM, items of one KV block each, long math. The second item's K and V have a free stage at
  // once, but its Q buffer frees only when the first item's step is released: its Q load then
  // adds at least an L2 round trip after the first item's math, which two items would not pay if
  // Q went with its stage.
  const ArchConfig arch = h100();
  const std::vector<std::string> math = {"workload.compute_cycles=5000"};
  const test::Result one = test::run_in_child(small(128, 128, 1, 1, false, 1, math), arch);
  const test::Result two = test::run_in_child(small(256, 128, 1, 1, false, 1, math), arch);
  BOOST_TEST(two.loads == 2 * one.loads);
  BOOST_TEST(two.cycles > one.cycles + 5000 + arch.l2.hit_latency, one.cycles << " and " << two.cycles << " cycles");
}
