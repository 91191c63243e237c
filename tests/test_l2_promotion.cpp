// The L2's promoted fills: a miss with L2 promotion fetches the whole promoted block, but the
// request waits only for the sectors it asked for (they go to DRAM first); a later request for a
// promoted sector waits for that sector's own data; and with background_promoted_fills the
// promoted part does not hold demand back; a miss fetches at least the fetch granularity around
// the sectors asked for, in the demand's access; fetched sectors nobody asked for, homed in the
// other partition than the SM's, count in lts_sectors unless another SM asks for them at once,
// and promoted ones homed away from the demand cross the partitions' crossbar;
// every line of a request's promotion region is looked up, hit or miss, at the L2's tag lookup
// rate; the first read of a line a promotion took in unasked is a lookup miss that fetches
// nothing, and for a share of the lines takes a detour (later than a hit). The L2 and a DRAM are driven directly, at chosen cycles, once the design is elaborated.
#define BOOST_TEST_MODULE l2_promotion
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "l2_bench.h"

using namespace tma;

int sc_main(int, char**) { return 0; }

namespace {

// The L2 bench of these tests: the round-number architecture above, or one of its variants.
struct Bench : test::L2Bench {
  Bench(const std::string& name, uint32_t background_promoted, uint32_t partitions = 1)
      : L2Bench(name, test::round_number_l2_arch(background_promoted, partitions)) {}
  Bench(const std::string& name, const ArchConfig& arch) : L2Bench(name, arch) {}
};

struct Benches {
  Bench fifo{"fifo", 0}, priority{"priority", 1}, partitioned{"partitioned", 0, 2};
  // Two partitions joined by a crossbar that moves 4 bytes a cycle.
  Bench narrow_crossbar{"narrow_crossbar", [] {
    ArchConfig a = test::round_number_l2_arch(0, 2);
    a.l2.crossbar_bytes_per_cycle = 4;
    return a;
  }()};
  // A 64-byte fetch granularity (the GPU's default), one partition and two.
  Bench fetch64{"fetch64", [] {
    ArchConfig a = test::round_number_l2_arch(1);
    a.l2.fetch_granularity_bytes = 64;
    return a;
  }()};
  Bench fetch64_partitioned{"fetch64_partitioned", [] {
    ArchConfig a = test::round_number_l2_arch(0, 2);
    a.l2.fetch_granularity_bytes = 64;
    return a;
  }()};
  // One tag lookup a cycle.
  Bench lookup_bound{"lookup_bound", [] {
    ArchConfig a = test::round_number_l2_arch(0);
    a.l2.tag_lookups_per_cycle = 1;
    return a;
  }()};
  // Two partitions, and half the lines a 256B promotion takes in unasked are first read 190
  // cycles after a hit would be.
  Bench detour{"detour", [] {
    ArchConfig a = test::round_number_l2_arch(0, 2);
    a.l2.promoted_detour_cycles = 190;
    a.l2.promoted_detour_share = 0.5;
    return a;
  }()};
  Benches() { sc_core::sc_start(sc_core::SC_ZERO_TIME); }
};
Benches& benches() {
  static Benches b;
  return b;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_promoted_miss_waits_only_for_its_own_sectors) {
  Bench& b = benches().fifo;
  // 128 bytes with 256B promotion: the request reaches the L2 at 5, its 128 bytes leave DRAM at
  // 9 and are in the L2 at 109 (latency 100); one cycle on the link and 5 back: 115. The other
  // 128 bytes follow them: out at 13, in the L2 at 113.
  BOOST_TEST(b.driver->read(0, 128, 256, 0) == 115u);
  BOOST_TEST(b.stat(*b.l2, "dram_fill_bytes") == 256);
  BOOST_TEST(b.stat(*b.dram, "promoted_read_bytes") == 128);
  // The promoted line, asked for at once: no DRAM access of its own, it waits for its data (113).
  BOOST_TEST(b.driver->read(128, 128, 256, 0) == 119u);
  BOOST_TEST(b.stat(*b.l2, "dram_fill_bytes") == 256);
  // Once its data is in, a plain hit: 10 cycles and a cycle each in the slice and on the link.
  BOOST_TEST(b.driver->read(128, 128, 256, 200) == 212u);
}

BOOST_AUTO_TEST_CASE(with_priority_a_demand_miss_passes_promoted_fills) {
  Bench& fifo = benches().fifo;
  Bench& prio = benches().priority;
  // A 256B-promoted miss books 256 bytes of DRAM (out at 1009 and 1013); a demand miss elsewhere
  // right after it waits for both in arrival order (out at 1017), with priority only for the
  // first one's demanded half (out at 1013).
  BOOST_TEST(fifo.driver->read(0x10000, 128, 256, 1000) == 1115u);
  BOOST_TEST(fifo.driver->read(0x20000, 128, 0, 1000) == 1123u);
  BOOST_TEST(prio.driver->read(0x10000, 128, 256, 1000) == 1115u);
  BOOST_TEST(prio.driver->read(0x20000, 128, 0, 1000) == 1119u);
}

BOOST_AUTO_TEST_CASE(far_promoted_sectors_count_unless_another_sm_asks_at_once) {
  Bench& b = benches().partitioned;
  const auto far = [&] { return b.stat(*b.l2, "promoted_far_sectors"); };
  const auto lts = [&] { return b.stat(*b.l2, "lts_sectors"); };
  // SM 0 misses the first half of 96 blocks of 256 bytes with 256B promotion: the second half of
  // a block is counted (4 sectors) when its line is homed in the other partition than SM 0's.
  std::vector<double> added;
  for (uint64_t k = 0; k < 96; ++k) {
    const double before = far();
    b.driver->read(0x100000 + 256 * k, 128, 256, 0, 0);
    added.push_back(far() - before);
    BOOST_TEST((added.back() == 0 || added.back() == 4));
  }
  double total = 0;
  for (double a : added) total += a;
  BOOST_TEST(total > 0);       // some promoted halves are far ...
  BOOST_TEST(total < 96 * 4);  // ... and some near
  BOOST_TEST(far() == total);
  // The second halves read by SM 0 itself (blocks 0-31), by SM 1 at once (32-63: the two meet
  // and are counted once) and by SM 1 long after (64-95).
  for (uint64_t k = 0; k < 32; ++k) b.driver->read(0x100000 + 256 * k + 128, 128, 256, 0, 0);
  BOOST_TEST(far() == total);
  double merged = 0;
  for (uint64_t k = 32; k < 64; ++k) {
    b.driver->read(0x100000 + 256 * k + 128, 128, 256, 0, 1);
    merged += added[k];
  }
  BOOST_TEST(merged > 0);
  BOOST_TEST(far() == total - merged);
  for (uint64_t k = 64; k < 96; ++k) b.driver->read(0x100000 + 256 * k + 128, 128, 256, 5000, 1);
  BOOST_TEST(far() == total - merged);
  // lts_sectors carries them on top of the sectors the requests touched.
  BOOST_TEST(lts() >= far() + 2 * 96 * 4);
}

BOOST_AUTO_TEST_CASE(far_promoted_sectors_cross_the_crossbar_to_their_home_partition) {
  Bench& b = benches().narrow_crossbar;
  const auto stat = [&](const char* n) { return b.stat(*b.l2, n); };
  // SM 0 misses the first half of a 256-byte block with 256B promotion at cycle t; then an SM of
  // the second half's home partition reads that half at once (a near read: no crossing of its
  // own; another SM at once, so the promoted half is counted once). The promoted half's 128 bytes leave DRAM 4 cycles after the demanded ones; homed in
  // the other partition than the demand's, they must cross too: 32 cycles at 4 bytes a cycle.
  int cases[3] = {0, 0, 0};
  for (uint64_t k = 0; k < 24; ++k) {
    const uint64_t t = 10000 * (k + 1), block = 0x200000 + 256 * k;
    const double far_before = stat("promoted_far_sectors"), requests_before = stat("far_requests");
    const uint64_t first = b.driver->read(block, 128, 256, t, 0);
    const bool first_far = stat("far_requests") > requests_before;  // homed in partition 1
    // The promoted half is counted when it is homed in the other partition than SM 0's (1).
    const int home_of_second = stat("promoted_far_sectors") > far_before ? 1 : 0;
    const bool crosses = home_of_second != (first_far ? 1 : 0);
    const uint64_t second = b.driver->read(block + 128, 128, 256, t, home_of_second);
    if (!crosses) {
      ++cases[0];  // both halves in one partition: the second is in 4 cycles after the first
      BOOST_TEST(second == first - (first_far ? 32 : 0) + 4, "block " << k);
    } else if (!first_far) {
      ++cases[1];  // the first stays in partition 0, the promoted half crosses to partition 1
      BOOST_TEST(second == first + 4 + 32, "block " << k);
    } else {
      ++cases[2];  // both cross, the request's own data first: the promoted half waits for it
      BOOST_TEST(second == first + 32, "block " << k);
    }
  }
  BOOST_TEST(cases[0] > 0);
  BOOST_TEST(cases[1] > 0);
  BOOST_TEST(cases[2] > 0);
}

BOOST_AUTO_TEST_CASE(promotion_regions_are_looked_up_line_by_line_even_on_hits) {
  // 16 reads of 64 bytes at once, each the first half of its own 256-byte block, all L2 hits.
  // A hit alone is back 12 cycles after it is sent (5 there, a cycle in the slice, a cycle on
  // the link, 5 back), 13 with 256B promotion (two lookups); at one lookup a cycle the reads queue for the lookups: the last of 16 one-
  // line lookups is done 16 cycles after they arrive, of 16 two-line lookups (256B promotion
  // also looks up the block's second line) 32 cycles after.
  const auto last_back = [](Bench& b, uint32_t promotion, uint64_t t) {
    uint64_t last = 0;
    for (uint64_t k = 0; k < 16; ++k) last = std::max(last, b.driver->read(0x300000 + 256 * k, 64, promotion, t));
    return last - t;
  };
  Bench& bound = benches().lookup_bound;
  bound.l2->prefill(0x300000, 4096);
  BOOST_TEST(bound.driver->read(0x300000, 64, 256, 10000) == 10013u);
  BOOST_TEST(last_back(bound, 0, 20000) == 5u + 16 + 1 + 5);
  BOOST_TEST(last_back(bound, 128, 30000) == 5u + 16 + 1 + 5);  // inside the line: one lookup
  BOOST_TEST(last_back(bound, 256, 40000) == 5u + 32 + 1 + 5);
  BOOST_TEST(bound.stat(*bound.l2, "tag_lookups") == 2 + 16 + 16 + 32);
  BOOST_TEST(bound.stat(*bound.l2, "sector_misses") == 0);
  // Without a lookup limit (0) the promotion region costs no time.
  Bench& free = benches().fifo;
  free.l2->prefill(0x300000, 4096);
  BOOST_TEST(last_back(free, 256, 50000) == last_back(free, 0, 60000));
}

BOOST_AUTO_TEST_CASE(a_miss_fetches_the_fetch_granularity_in_the_demand_access) {
  Bench& b = benches().fetch64;
  Bench& sectors = benches().fifo;  // 32-byte fetches
  const uint64_t t = 1000000;       // after the other cases' traffic
  const double fill0 = b.stat(*b.l2, "dram_fill_bytes"), sectors_fill0 = sectors.stat(*sectors.l2, "dram_fill_bytes");
  const double promoted0 = b.stat(*b.dram, "promoted_read_bytes");
  const auto fill = [&] { return b.stat(*b.l2, "dram_fill_bytes") - fill0; };
  // One sector: 64 bytes leave DRAM in one access (2 cycles at 32 bytes a cycle, no promoted
  // read); the data is back when the pair is in: 5 there, 2 cycles, 100 of latency, 1 on the
  // link, 5 back. With 32-byte fetches one cycle less.
  BOOST_TEST(b.driver->read(0x400000, 32, 0, t) == t + 113);
  BOOST_TEST(fill() == 64);
  BOOST_TEST(b.stat(*b.dram, "promoted_read_bytes") == promoted0);
  BOOST_TEST(sectors.driver->read(0x400000, 32, 0, t) == t + 112);
  BOOST_TEST(sectors.stat(*sectors.l2, "dram_fill_bytes") - sectors_fill0 == 32);
  // The other sector of the aligned pair is a hit; the next pair is a miss of its own.
  BOOST_TEST(b.driver->read(0x400020, 32, 0, t + 500) == t + 512);
  BOOST_TEST(fill() == 64);
  b.driver->read(0x400040, 32, 0, t + 1000);
  BOOST_TEST(fill() == 128);
  // A sector at the end of one pair and the start of the next: both pairs.
  b.driver->read(0x400120, 64, 0, t + 2000);
  BOOST_TEST(fill() == 256);
  // A larger promotion wins: 128B fetches the line, its other half as a promoted read.
  b.driver->read(0x400200, 32, 128, t + 3000);
  BOOST_TEST(fill() == 384);
  BOOST_TEST(b.stat(*b.dram, "promoted_read_bytes") - promoted0 == 64);
}

BOOST_AUTO_TEST_CASE(fetched_sectors_nobody_asked_for_count_where_the_line_is_far) {
  Bench& b = benches().fetch64_partitioned;
  const auto stat = [&](const char* n) { return b.stat(*b.l2, n); };
  // SM 0 (partition 0) reads one sector of each of 64 lines: a far line's read counts 2 sectors
  // (both partitions) and its unasked pair sector 1 more; a near line's 1 (silicon: 2.0 L2 bytes
  // per byte asked where 32-byte fetches give 1.5).
  int far_lines = 0;
  for (uint64_t k = 0; k < 64; ++k) {
    const double lts = stat("lts_sectors"), far = stat("far_requests");
    b.driver->read(0x500000 + 128 * k, 32, 0, 100 * k);
    const bool is_far = stat("far_requests") > far;
    far_lines += is_far;
    BOOST_TEST(stat("lts_sectors") - lts == (is_far ? 3 : 1), "line " << k);
  }
  BOOST_TEST(far_lines > 0);
  BOOST_TEST(far_lines < 64);
  BOOST_TEST(stat("promoted_far_sectors") == far_lines);
  // Another SM asking for those pair sectors within an L2 round trip of the fill meets it: they
  // are counted once (SM 1 is of partition 1, so it asks for far lines' sectors as a near read).
  for (uint64_t k = 0; k < 64; ++k) b.driver->read(0x500000 + 128 * k + 32, 32, 0, 100 * k, 1);
  BOOST_TEST(stat("promoted_far_sectors") == 0);
}

BOOST_AUTO_TEST_CASE(the_first_read_of_a_line_a_promotion_took_in_unasked_is_a_miss) {
  // Silicon (ncu, every 256 MB stream of the space): 64 B rows hit 50% with 128B or 256B
  // promotion alike, 128 B rows 0% and 6-16%, with DRAM read once: the other line of a 256-byte
  // block is a lookup miss when first read, though nothing is fetched for it.
  Bench& b = benches().fifo;
  const auto stat = [&](const char* n) { return b.stat(*b.l2, n); };
  const uint64_t t = 2000000, block = 0x600000;
  const double fill0 = stat("dram_fill_bytes"), hits0 = stat("sector_hits"), misses0 = stat("sector_misses");
  const double firsts0 = stat("promoted_line_first_reads");
  // The first line, asked for (4 sectors missed), brings the second in unasked.
  BOOST_TEST(b.driver->read(block, 128, 256, t) == t + 115);
  BOOST_TEST(stat("sector_misses") - misses0 == 4);
  // The second line read at once: 4 more misses, nothing fetched, and it waits for its data as
  // a hit on a fill in flight does (in the L2 at t + 113).
  BOOST_TEST(b.driver->read(block + 128, 128, 256, t) == t + 119);
  BOOST_TEST(stat("dram_fill_bytes") - fill0 == 256);
  BOOST_TEST(stat("sector_misses") - misses0 == 8);
  BOOST_TEST(stat("sector_hits") - hits0 == 0);
  BOOST_TEST(stat("promoted_line_first_reads") - firsts0 == 1);
  // Read again, both lines are plain hits.
  BOOST_TEST(b.driver->read(block + 128, 128, 256, t + 200) == t + 212);
  BOOST_TEST(b.driver->read(block, 128, 256, t + 300) == t + 312);
  BOOST_TEST(stat("sector_hits") - hits0 == 8);
  BOOST_TEST(stat("promoted_line_first_reads") - firsts0 == 1);
  // A promotion inside the line (128B) takes in no line unasked: the rest of the line, read at
  // once, is a hit on the fill in flight.
  b.driver->read(block + 0x1000, 32, 128, t + 1000);
  const double hits1 = stat("sector_hits");
  b.driver->read(block + 0x1000 + 32, 96, 128, t + 1000);
  BOOST_TEST(stat("sector_hits") - hits1 == 3);
  BOOST_TEST(stat("promoted_line_first_reads") - firsts0 == 1);
}

BOOST_AUTO_TEST_CASE(some_promoted_lines_are_first_read_by_a_detour) {
  // Silicon (promoted_line.csv, H200): the other line of a 256-byte block read after the block's
  // data is in takes a hit's time (about 300 cycles for one row) or 190 cycles more, about half
  // the rows each, the same rows on another lease; every such read is a lookup miss with nothing
  // fetched.
  Bench& b = benches().detour;
  const auto stat = [&](const char* n) { return b.stat(*b.l2, n); };
  int detours = 0, direct = 0;
  for (uint64_t k = 0; k < 64; ++k) {
    const uint64_t t = 10000 * (k + 1), block = 0x700000 + 256 * k;
    b.driver->read(block, 128, 256, t, 0);
    const double fill = stat("dram_fill_bytes"), detour = stat("promoted_detour_reads"), lts = stat("lts_sectors");
    const double far_requests = stat("far_requests");
    // SM 0 reads the other line long after its data is in, then again (a hit: 12 cycles, 5 there,
    // a cycle in the slice and one on the link, 5 back; the read again of a line homed in the
    // other partition than SM 0's finds the near copy the first read left).
    const uint64_t first = b.driver->read(block + 128, 128, 256, t + 2000, 0) - (t + 2000);
    const bool by_detour = stat("promoted_detour_reads") > detour;
    const bool far = stat("far_requests") > far_requests;
    const double lts_first = stat("lts_sectors") - lts;
    const uint64_t again = b.driver->read(block + 128, 128, 256, t + 4000, 0) - (t + 4000);
    BOOST_TEST(again == 12u, "block " << k);
    BOOST_TEST(stat("dram_fill_bytes") == fill, "block " << k);
    // A far read crosses the crossbar: one cycle more (128 bytes at 4096 a cycle).
    if (by_detour) {
      ++detours;
      // Its data 190 cycles after it reaches the slice (where a hit's lookup takes a cycle).
      BOOST_TEST(first == 5u + 190 + (far ? 1 : 0) + 1 + 5, "block " << k);
    } else {
      ++direct;
      BOOST_TEST(first == 12u + (far ? 1 : 0), "block " << k);
    }
    // Counted as a read's sectors (both partitions' for a far read).
    BOOST_TEST(lts_first == (far ? 8 : 4), "block " << k);
  }
  // About half each (a hash of the line).
  BOOST_TEST(detours > 16);
  BOOST_TEST(direct > 16);
  BOOST_TEST(stat("promoted_detour_reads") == detours);
  BOOST_TEST(stat("promoted_line_first_reads") == 64);
}
