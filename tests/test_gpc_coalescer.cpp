// GpcCoalescer: reads of the same sectors by SMs of one GPC within its window are served once.
#define BOOST_TEST_MODULE gpc_coalescer
#include <boost/test/unit_test.hpp>

#include <systemc>

#include "tma/memory/gpc_coalescer.h"

using namespace tma;

// The model library links SystemC, whose main() calls sc_main; this test elaborates nothing.
int sc_main(int, char**) { return 0; }

namespace {
// 8 SMs, 4 per GPC, a 100-cycle window, 1,024 reads a GPC, 128-byte lines of 32-byte sectors.
GpcCoalescer coalescer() { return GpcCoalescer(8, 4, 100, 1024, 128, 32); }
}  // namespace

BOOST_AUTO_TEST_CASE(a_read_of_sectors_another_sm_of_the_gpc_just_read_is_merged) {
  GpcCoalescer c = coalescer();
  uint64_t back = 0;
  BOOST_TEST(!c.merge(0, 0x1000, 128, 10, back));  // nothing read yet
  c.record(0, 0x1000, 128, 10, 300);               // SM 0's read, data back at the GPC at 300
  BOOST_TEST(c.merge(1, 0x1000, 128, 50, back));   // SM 1, 40 cycles later: served from it
  BOOST_TEST(back == 300u);
  BOOST_TEST(c.merge(3, 0x1020, 32, 0, back));     // a part of it, reported from behind (SM 3 ran late)
}

BOOST_AUTO_TEST_CASE(no_merge_across_gpcs_outside_the_window_for_the_same_sm_or_new_sectors) {
  GpcCoalescer c = coalescer();
  uint64_t back = 0;
  c.record(0, 0x2000, 64, 1000, 1300);
  BOOST_TEST(!c.merge(4, 0x2000, 64, 1000, back));   // SM 4 is in the next GPC
  BOOST_TEST(!c.merge(1, 0x2000, 64, 1301, back));   // after its data is back: a read of its own
  BOOST_TEST(!c.merge(1, 0x2000, 64, 899, back));    // 101 before (reported late): outside the window
  BOOST_TEST(!c.merge(0, 0x2000, 64, 1000, back));   // the same SM again is a read of its own
  BOOST_TEST(!c.merge(1, 0x2000, 128, 1000, back));  // two of its four sectors were not read
  BOOST_TEST(!c.merge(1, 0x2040, 64, 1000, back));   // the other two
  BOOST_TEST(!c.merge(1, 0x1FC0, 128, 1000, back));  // across two lines: never merged
}

// Silicon (tests/calibration/h100/coalesce.csv): the second of two CTAs of a cluster loading the
// same tiles merges while the first one's data is on its way, however long that takes (from DRAM
// under load: 1-2 us), and not after it (from the L2: 250 ns apart, no merge).
BOOST_AUTO_TEST_CASE(a_read_merges_while_the_other_is_in_flight_and_not_after) {
  GpcCoalescer c = coalescer();
  uint64_t back = 0;
  c.record(0, 0x4000, 128, 1000, 3000);             // a miss: data back 2000 cycles later
  BOOST_TEST(c.merge(1, 0x4000, 128, 2999, back));  // 1999 cycles later, far outside the window
  BOOST_TEST(back == 3000u);
  BOOST_TEST(c.merge(2, 0x4000, 128, 3000, back));  // as the data comes back
  BOOST_TEST(!c.merge(3, 0x4000, 128, 3001, back)); // once it is back: the L2 serves it again
  c.record(0, 0x5000, 128, 1000, 1250);             // a hit: back in 250 cycles
  BOOST_TEST(!c.merge(1, 0x5000, 128, 1300, back));
}

BOOST_AUTO_TEST_CASE(a_window_of_zero_turns_it_off) {
  GpcCoalescer c(8, 4, 0, 1024, 128, 32);
  uint64_t back = 0;
  c.record(0, 0x3000, 128, 10, 300);
  BOOST_TEST(!c.enabled());
  BOOST_TEST(!c.merge(1, 0x3000, 128, 10, back));
}

// A GEMM's SMs keep thousands of lines in flight a GPC (an L2-bound main loop about 10,000 for
// 2,000 cycles each): every one of them can be merged with while the table has room, and only the
// reads whose data came back first give way when a set is full.
BOOST_AUTO_TEST_CASE(every_read_in_flight_is_kept_up_to_the_capacity) {
  GpcCoalescer c = coalescer();
  uint64_t back = 0;
  for (uint64_t i = 0; i < 512; ++i) c.record(0, i * 128, 128, i, 5000 + i);  // half the capacity
  uint32_t merged = 0;
  for (uint64_t i = 0; i < 512; ++i) merged += c.merge(1, i * 128, 128, 4000, back);
  BOOST_TEST(merged >= 500u);  // hashed into 4-way sets: a few sets overflow
  BOOST_TEST(c.evicted_in_flight() == 512u - merged);
  // Four times the capacity: a set keeps its four latest reads, whose data is back last.
  GpcCoalescer small = coalescer();
  for (uint64_t i = 0; i < 4096; ++i) small.record(0, i * 128, 128, i, 5000 + i);
  uint32_t recent = 0, old = 0;
  for (uint64_t i = 0; i < 256; ++i) old += small.merge(1, i * 128, 128, 4000, back);
  for (uint64_t i = 3840; i < 4096; ++i) recent += small.merge(1, i * 128, 128, 4000, back);
  BOOST_TEST(old < 8u);
  BOOST_TEST(recent > 200u);
  BOOST_TEST(small.evicted_in_flight() >= 4096u - 1024u);
  // A read whose data is back gives way before one in flight: the line read long ago is replaced
  // silently, and the set keeps the reads still in flight.
  GpcCoalescer one(8, 4, 100, 4, 128, 32);  // one set of four
  one.record(0, 0x0, 128, 0, 100);          // back at 100
  for (uint64_t i = 1; i <= 3; ++i) one.record(0, i * 128, 128, 200, 3000);
  one.record(0, 4 * 128, 128, 200, 3000);   // replaces line 0, whose data was back at 100
  BOOST_TEST(one.evicted_in_flight() == 0u);
  for (uint64_t i = 1; i <= 4; ++i) BOOST_TEST(one.merge(1, i * 128, 128, 250, back));
  BOOST_TEST(!one.merge(1, 0x0, 128, 50, back));
}

BOOST_AUTO_TEST_CASE(a_capacity_that_is_not_a_power_of_two_is_refused) {
  BOOST_CHECK_THROW(GpcCoalescer(8, 4, 100, 1000, 128, 32), std::invalid_argument);
}

// Silicon (tests/calibration/h200/coalesce_group.csv): g CTAs of one GPC reading the same lines
// together reach the L2 once a line for g = 2-4, twice for 6 and 8, four times for 16, whether they
// sit on neighbouring TPCs or are spread over the GPC's: one read serves four SMs at most.
BOOST_AUTO_TEST_CASE(a_read_serves_at_most_its_readers_and_the_next_reads_on_their_own) {
  GpcCoalescer c(16, 16, 100, 1024, 128, 32, 4);
  uint64_t back = 0;
  // Eight SMs ask for one line at cycles 10-17; whichever the coalescer cannot serve goes to the
  // L2 and is recorded (its data back at 400 + its cycle).
  uint32_t to_l2 = 0;
  for (int sm = 0; sm < 8; ++sm) {
    const uint64_t cycle = 10 + sm;
    if (c.merge(sm, 0x8000, 128, cycle, back)) {
      BOOST_TEST(back == 410u + (sm < 4 ? 0u : 4u));  // the first read's data, or the fifth SM's
      continue;
    }
    ++to_l2;
    c.record(sm, 0x8000, 128, cycle, 400 + cycle);
  }
  BOOST_TEST(to_l2 == 2u);  // SMs 0 and 4
  // Sixteen: four reads. Without a limit: one.
  GpcCoalescer any(16, 16, 100, 1024, 128, 32, 0);
  uint32_t reads16 = 0, reads_any = 0;
  for (int sm = 0; sm < 16; ++sm) {
    if (!c.merge(sm, 0x9000, 128, 20, back)) ++reads16, c.record(sm, 0x9000, 128, 20, 500);
    if (!any.merge(sm, 0x9000, 128, 20, back)) ++reads_any, any.record(sm, 0x9000, 128, 20, 500);
  }
  BOOST_TEST(reads16 == 4u);
  BOOST_TEST(reads_any == 1u);
}

// Silicon (coalesce_group.csv points 170-197): two CTAs reading lines warm in the L2 merge a third
// to two thirds of the second's reads when they ask together and 1-5% when 10 cycles apart; from
// DRAM they merge 250 ns-2 us apart. A hit's read merges only reads within the hit window of it;
// a read that waits for DRAM (or another read's fill) merges while it is in flight.
BOOST_AUTO_TEST_CASE(a_hit_merges_only_reads_that_reach_the_gpc_with_it) {
  GpcCoalescer c(8, 4, 100, 1024, 128, 32, 4, 8);
  uint64_t back = 0;
  c.record(0, 0x6000, 128, 1000, 1470, true);        // a hit: data back 470 cycles later
  BOOST_TEST(c.merge(1, 0x6000, 128, 1008, back));  // 8 cycles after it: together
  BOOST_TEST(back == 1470u);
  BOOST_TEST(c.merge(2, 0x6000, 128, 994, back));   // 6 before it (SM 2 ran late): together
  BOOST_TEST(!c.merge(3, 0x6000, 128, 1009, back)); // 9 after: a read of its own, although in flight
  c.record(0, 0x7000, 128, 1000, 2500, false);       // a miss: in flight 1,500 cycles
  BOOST_TEST(c.merge(1, 0x7000, 128, 2400, back));
  BOOST_TEST(back == 2500u);
}
