// The L2's two partitions as silicon shows them (tests/calibration/*/partition_*.csv): each SM
// reads through the partition l2.sm_partition names (TPC neighbours, SMs 2k and 2k + 1, share one),
// a line homed in the other partition is a far access that takes l2.far_latency more, and an
// architecture file must say every SM's partition. The L2 and a DRAM are driven directly.
#define BOOST_TEST_MODULE l2_partitions
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "l2_bench.h"
#include "tma/config/arch_config_yaml.h"
#include "tma/config/yaml_reader.h"

using namespace tma;

int sc_main(int, char**) { return 0; }

namespace {

// The round-number L2 (a hit in 10 cycles) with two partitions, far lines 30 cycles more, and
// each SM's partition as `sm_partition` says (empty: SM % 2).
ArchConfig arch(std::vector<uint32_t> sm_partition) {
  ArchConfig a = test::round_number_l2_arch(0, 2);
  a.l2.far_latency = 30;
  a.l2.sm_partition = std::move(sm_partition);
  return a;
}

// The L2 bench with the far requests it has counted.
struct Bench : test::L2Bench {
  using L2Bench::L2Bench;
  double far_requests() const { return stat(*l2, "far_requests"); }
};

struct Benches {
  // SMs 0 and 1 in one partition (as a TPC's two SMs are on silicon), and in two (SM % 2).
  Bench same{"same", arch({0, 0})}, apart{"apart", arch({})};
  // For the warm L2: two partitions (SM 1 keeps near copies of its far lines) and one (no copies).
  // 1024 ways (8 sets), so that what fits is a matter of capacity, not of how the hash fills sets.
  Bench warm_sm{"warm_sm", wide(arch({}))}, warm_one{"warm_one", wide(test::round_number_l2_arch(0, 1))};
  static ArchConfig wide(ArchConfig a) {
    a.l2.ways = 1024;
    return a;
  }
  // SM % 2, the crossbar 16 bytes a cycle; a far read takes its fill's span across, or only what
  // it asked for.
  Bench span{"span", with_span(1)}, asked{"asked", with_span(0)};
  static ArchConfig with_span(uint32_t on) {
    ArchConfig a = arch({});
    a.l2.crossbar_bytes_per_cycle = 16;
    a.l2.far_read_takes_span = on;
    return a;
  }
  Benches() { sc_core::sc_start(sc_core::SC_ZERO_TIME); }
};
Benches& benches() {
  static Benches b;
  return b;
}

}  // namespace

BOOST_AUTO_TEST_CASE(an_sm_reads_through_the_partition_the_map_names) {
  // Each line is filled by SM 0, then read by SM 1 from the L2 (a hit): a far hit comes back
  // 31 cycles after a near one. With both SMs in partition 0, SM 1 reaches every line near (its
  // home, or the copy SM 0's far read left in partition 0); with SM 1 in partition 1, its far
  // lines are those SM 0 found near.
  for (Bench* b : {&benches().same, &benches().apart}) {
    const bool same = b == &benches().same;
    int near_for_0 = 0, far_for_0 = 0;
    for (uint64_t k = 0; k < 64; ++k) {
      const uint64_t line = 0x10000 + 128 * k, t = 100000 * (k + 1);
      const double before = b->far_requests();
      b->driver->read(line, 128, 0, t, 0);  // the miss: fills the line
      const bool far_for_sm0 = b->far_requests() > before;
      (far_for_sm0 ? far_for_0 : near_for_0)++;
      const double before_hit = b->far_requests();
      const uint64_t back = b->driver->read(line, 128, 0, t + 1000, 1);
      const bool far_for_sm1 = b->far_requests() > before_hit;
      BOOST_TEST(far_for_sm1 == (same ? false : !far_for_sm0), "line " << k);
      // The hit latency (10) and a cycle each in the slices and on the SM's link; a far line 30
      // more (half each way) and a cycle on the crossbar.
      BOOST_TEST(back == t + 1000 + 12 + (far_for_sm1 ? 31 : 0), "line " << k << " back after " << back - t - 1000);
    }
    BOOST_TEST(near_for_0 > 0);  // lines are homed in both partitions
    BOOST_TEST(far_for_0 > 0);
  }
}

BOOST_AUTO_TEST_CASE(a_warm_l2_keeps_the_near_copies_its_reads_made_and_they_take_room) {
  // The L2 a previous kernel left when SM 1 read a tensor: its far lines (about half) have near
  // copies in SM 1's partition too. Half the L2's capacity then fits, and SM 1 reads it again
  // without a far access or a DRAM read. 7/8 of it does not (the copies take about 7/16 more): read
  // again in the same order, LRU has evicted each line before its turn, where one partition (no
  // copies) keeps it all (silicon: a 32 MB tensor read again is 91-97% L2 hits, 40 MB 32-56%,
  // 48 MB none, in a 50 MB L2: tests/calibration/h100/space_sync_traffic.csv, group capacity).
  const uint64_t capacity = 1 << 20, base = 0x4000000;
  const auto reread_misses = [&](Bench& b, uint64_t bytes, uint64_t t0, double& far) {
    b.l2->prefill(base, bytes, false, 1);
    const double fills = test::L2Bench::stat(*b.l2, "dram_fill_bytes"), far0 = b.far_requests();
    for (uint64_t a = 0; a < bytes; a += 128) b.driver->read(base + a, 128, 0, t0 + a, 1);
    far = b.far_requests() - far0;
    return (test::L2Bench::stat(*b.l2, "dram_fill_bytes") - fills) / 128;
  };
  const double lines = capacity / 8 * 7 / 128;
  double far = 0;
  BOOST_TEST(reread_misses(benches().warm_sm, capacity / 2, 10000000, far) == 0);
  BOOST_TEST(far == 0);  // every far line served by its near copy
  BOOST_TEST(reread_misses(benches().warm_sm, capacity / 8 * 7, 20000000, far) == lines);
  BOOST_TEST(reread_misses(benches().warm_one, capacity / 8 * 7, 10000000, far) == 0);
}

BOOST_AUTO_TEST_CASE(a_far_read_takes_its_fills_whole_span_across_and_its_near_copy_keeps_it) {
  // SM 0 reads a line's first sector with 128B promotion, then its third. Where the line is homed
  // in the other partition, the home sends the first read the whole promoted line (silicon: the two
  // 64-byte halves of 128B-promoted rows read by SMs of two GPCs, 30 of 66 pairs in two
  // partitions, count 1.77 L2 sectors per byte, where this rule gives 1.73, and 1.50 from one TPC:
  // h200/repeat/page_share_rep3): its
  // four sectors cross (8 cycles of the crossbar, not 2), the home counts them all (the near
  // partition its one), and the third sector is then a near-copy hit. Without the span only the
  // asked sector crosses, the line's other three are counted once more at the fill, and the third
  // sector is another far read.
  int far_lines = 0;
  for (uint64_t k = 0; k < 64; ++k) {
    const uint64_t line = 0x200000 + 128 * k, t = 100000 * (k + 1);
    uint64_t back[2], second[2];
    double far[2], lts[2];
    Bench* benches_[2] = {&benches().span, &benches().asked};
    for (int i = 0; i < 2; ++i) {
      Bench& b = *benches_[i];
      const double far0 = b.far_requests(), lts0 = test::L2Bench::stat(*b.l2, "lts_sectors");
      back[i] = b.driver->read(line, 32, 128, t, 0);
      second[i] = b.driver->read(line + 64, 32, 128, t + 1000, 0);
      far[i] = b.far_requests() - far0;
      lts[i] = test::L2Bench::stat(*b.l2, "lts_sectors") - lts0;
    }
    if (far[1] == 0) {  // a near line: the same either way, two sectors counted once each
      BOOST_TEST(far[0] == 0, "line " << k);
      BOOST_TEST(lts[0] == 2, "line " << k);
      BOOST_TEST(lts[1] == 2, "line " << k);
      BOOST_TEST(back[0] == back[1], "line " << k);
      continue;
    }
    ++far_lines;
    BOOST_TEST(far[0] == 1, "line " << k);  // the third sector from the near copy
    BOOST_TEST(far[1] == 2, "line " << k);
    BOOST_TEST(lts[0] == 6, "line " << k);  // 1 + 4, then 1
    BOOST_TEST(lts[1] == 7, "line " << k);  // 2 + 3, then 2
    BOOST_TEST(back[0] == back[1] + 6, "line " << k);  // 128 bytes across at 16 a cycle, not 32
    BOOST_TEST(second[0] + 31 == second[1] - 1, "line " << k);  // near hit against a far one
  }
  BOOST_TEST(far_lines > 0);
}

BOOST_AUTO_TEST_CASE(the_shipped_gpus_say_every_sms_partition_and_tpc_neighbours_share_one) {
  for (const char* gpu : {"h100", "h200"}) {
    const ArchConfig a = load_arch_config(std::string(TMA_SOURCE_DIR) + "/configs/arch/" + gpu + ".yaml");
    BOOST_TEST_REQUIRE(a.l2.sm_partition.size() == a.sm_count);
    BOOST_TEST(std::count(a.l2.sm_partition.begin(), a.l2.sm_partition.end(), 0u) == 66);
    for (uint32_t sm = 0; sm + 1 < a.sm_count; sm += 2) BOOST_TEST(a.l2.sm_partition[sm] == a.l2.sm_partition[sm + 1]);
  }
}

BOOST_AUTO_TEST_CASE(a_file_without_a_partition_for_each_sm_is_refused_naming_the_field) {
  std::ifstream in(std::string(TMA_SOURCE_DIR) + "/configs/arch/h100.yaml");
  const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string path = "/tmp/tma_test_l2_partitions.yaml";
  const auto refused = [&](const std::string& yaml, const std::string& words) {
    std::ofstream(path) << yaml;
    try {
      load_arch_config(path);
    } catch (const YamlError& e) {
      return std::string(e.what()).find("sm_partition") != std::string::npos &&
             std::string(e.what()).find(words) != std::string::npos;
    }
    return false;
  };
  const size_t at = good.find("[0, 0", good.find("sm_partition:"));  // the list's first entry
  BOOST_TEST_REQUIRE(at != std::string::npos);
  std::string two = good;
  two.replace(at, 2, "[2");  // a partition the L2 does not have
  BOOST_TEST(refused(two, "not below partitions"));
  std::string short_list = good;
  short_list.replace(at, 3, "[");  // 131 SMs
  BOOST_TEST(refused(short_list, "sm_count is 132"));
  std::string none = good;  // the key and its list taken out
  const size_t key = none.find("  sm_partition:");
  none.erase(key, none.find("]\n", key) + 2 - key);
  BOOST_TEST(refused(none, "missing"));
  std::remove(path.c_str());
}
