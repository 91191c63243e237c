// The L2's slices answering their reads in the order they came (l2.in_order_slices) and the
// requests in flight the SMs of a CPC share (CpcRequestPool, tma.cpc_outstanding_requests): the two
// rules that let silicon's fast SMs run ahead of the others and stay ahead (docs/calibration.md,
// "CPC pools and in-order slices"), and the rate at which the slices take requests
// (l2.requests_per_cycle). The L2 and a DRAM are driven directly.
#define BOOST_TEST_MODULE l2_in_order
#include <boost/test/unit_test.hpp>

#include "l2_bench.h"
#include "tma/tma/cpc_request_pool.h"

#include <functional>
#include <queue>
#include <vector>

using namespace tma;

int sc_main(int, char**) { return 0; }

namespace {

ArchConfig arch(uint32_t in_order_slices, double requests_per_cycle = 0, uint32_t until_dram_slot = 0) {
  ArchConfig a = test::round_number_l2_arch(0);
  a.l2.in_order_slices = in_order_slices;
  a.l2.requests_per_cycle = requests_per_cycle;
  a.l2.in_order_until_dram_slot = until_dram_slot;
  return a;
}

struct Benches {
  // One slice that answers in order, and the same L2 without the rule; one that takes a request
  // every other cycle.
  test::L2Bench in_order{"in_order", arch(1)}, any_order{"any_order", arch(0)};
  test::L2Bench request_bound{"request_bound", arch(0, 0.5)};
  // One slice whose misses hold it only until their DRAM reads get the channel.
  test::L2Bench until_slot{"until_slot", arch(1, 0, 1)};
  Benches() { sc_core::sc_start(sc_core::SC_ZERO_TIME); }
};
Benches& benches() {
  static Benches b;
  return b;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_hit_behind_a_miss_of_its_slice_waits_for_the_miss) {
  // Line B is in the L2 (read once long before); line A is not. A's miss goes at cycle 100000,
  // B's hit 5 cycles later. The round-number L2: a hit is back 12 cycles after it is asked for
  // (10 of latency, a cycle in the slices and one on the link); A's fill waits for DRAM (100
  // cycles of latency, 4 to move a 128-byte line at 32 bytes a cycle).
  for (test::L2Bench* b : {&benches().in_order, &benches().any_order}) {
    const bool in_order = b == &benches().in_order;
    const uint64_t a = 0x100000, warm = 0x200000, t = 100000;
    b->driver->read(warm, 128, 0, 10000);  // B filled long before
    const uint64_t a_back = b->driver->read(a, 128, 0, t);
    const uint64_t b_back = b->driver->read(warm, 128, 0, t + 5);
    BOOST_TEST(a_back > t + 100, "the miss is back after " << a_back - t);
    if (in_order) {
      BOOST_TEST(b_back >= a_back, "in order: the hit is back at " << b_back << ", the miss at " << a_back);
      BOOST_TEST(test::L2Bench::stat(*b->l2, "in_order_waits") == 1);
    } else {
      BOOST_TEST(b_back == t + 5 + 12);
      BOOST_TEST(test::L2Bench::stat(*b->l2, "in_order_waits") == -1);  // not counted: the rule is off
    }
    // A hit asked for after the miss is back is not held.
    const uint64_t later = b->driver->read(warm, 128, 0, a_back + 1000);
    BOOST_TEST(later == a_back + 1000 + 12);
  }
}

BOOST_AUTO_TEST_CASE(with_until_dram_slot_a_hit_waits_behind_misses_only_while_dram_queues_them) {
  // l2.in_order_until_dram_slot: a miss holds its slice's hits only until its DRAM read gets the
  // channel (the round-number DRAM: one channel, 32 bytes a cycle, so 4 cycles a 128-byte line,
  // then 100 of latency); misses are still answered in order. Unloaded, the miss gets the channel
  // on arrival and a hit 5 cycles behind it is not held (silicon: a CTA trailing another over the
  // same tiles catches up, coalesce_capacity.csv and coalesce_background.csv).
  test::L2Bench& b = benches().until_slot;
  const uint64_t warm = 0x400000, t = 300000;
  b.driver->read(warm, 128, 0, 10000);
  const uint64_t miss_back = b.driver->read(0x500000, 128, 0, t);
  const uint64_t hit_back = b.driver->read(warm, 128, 0, t + 5);
  BOOST_TEST(miss_back > t + 100);
  BOOST_TEST(hit_back == t + 5 + 12, "unloaded, the hit is back after " << hit_back - t - 5);
  BOOST_TEST(test::L2Bench::stat(*b.l2, "in_order_waits") == 0);
  // Saturated: 8 misses at once queue at the channel, the last getting it 28 cycles after the
  // first (at t2 + 5 + 28). A hit behind them waits for that, not for their data.
  const uint64_t t2 = 400000;
  uint64_t last_miss_back = 0;
  for (uint64_t k = 0; k < 8; ++k) last_miss_back = std::max(last_miss_back, b.driver->read(0x600000 + 128 * k, 128, 0, t2));
  const uint64_t held_back = b.driver->read(warm, 128, 0, t2 + 5);
  BOOST_TEST(held_back == t2 + 5 + 28 + 1 + 5, "behind queued misses the hit is back after " << held_back - t2 - 5);
  BOOST_TEST(held_back + 100 < last_miss_back, "the misses are back at " << last_miss_back - t2);
  BOOST_TEST(test::L2Bench::stat(*b.l2, "in_order_waits") == 1);
}

BOOST_AUTO_TEST_CASE(the_slices_take_requests_at_their_rate_whatever_their_size) {
  // l2.requests_per_cycle 0.5: 16 hits of 32 bytes asked for at once, each its own line. Without
  // the rate the round-number L2 (4 KB a cycle) has them all back 12 cycles later (5 there, a
  // cycle in the slices, one on the link, 5 back); at a request every other cycle the last is
  // taken 32 cycles after they arrive: back after 5 + 32 + 1 + 5.
  test::L2Bench& b = benches().request_bound;
  test::L2Bench& free = benches().any_order;
  const auto last_back = [](test::L2Bench& bench, uint64_t t) {
    uint64_t last = 0;
    for (uint64_t k = 0; k < 16; ++k) last = std::max(last, bench.driver->read(0x300000 + 128 * k, 32, 0, t));
    return last - t;
  };
  b.l2->prefill(0x300000, 16 * 128);
  free.l2->prefill(0x300000, 16 * 128);
  const uint64_t bound = last_back(b, 200000), unbound = last_back(free, 200000);
  BOOST_TEST(unbound == 12u);
  BOOST_TEST(bound == 5u + 32 + 1 + 5, "at half a request a cycle the last is back after " << bound);
}

BOOST_AUTO_TEST_CASE(a_cpc_pool_holds_a_request_until_one_of_its_capacity_completes) {
  CpcRequestPool pool(2);
  const uint32_t a = pool.join(), b = pool.join();
  BOOST_TEST(pool.admit(10) == 10u);
  pool.add(a, 500);
  BOOST_TEST(pool.admit(20) == 20u);
  pool.add(b, 300);
  // Both slots taken until 300: a third request asked for at 30 goes at 300, the earliest
  // completion (another unit's), and frees that slot for itself.
  BOOST_TEST(pool.admit(30) == 300u);
  pool.add(a, 900);
  BOOST_TEST(pool.stalls() == 1u);
  // At 600 the request done at 500 has freed its slot; 900's is still taken.
  BOOST_TEST(pool.admit(600) == 600u);
  pool.add(b, 1000);
  BOOST_TEST(pool.admit(700) == 900u);
  BOOST_TEST(pool.stalls() == 2u);
}

// The pool's units arrive a quantum apart in simulator order, so its completions are far from
// sorted; it must still admit exactly as a pool of one min-heap of every completion would.
BOOST_AUTO_TEST_CASE(a_cpc_pool_admits_as_one_heap_of_all_its_units_completions) {
  uint64_t state = 12345;
  auto next = [&state](uint64_t n) {  // a small LCG: the same traces on every host
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % n;
  };
  uint64_t all_stalls = 0;
  for (int trace = 0; trace < 200; ++trace) {
    const uint32_t capacity = 1 + static_cast<uint32_t>(next(12));
    const uint32_t units = 1 + static_cast<uint32_t>(next(6));
    CpcRequestPool pool(capacity);
    for (uint32_t u = 0; u < units; ++u) BOOST_TEST(pool.join() == u);
    std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<uint64_t>> heap;
    uint64_t heap_stalls = 0;
    std::vector<uint64_t> clock(units, 0);
    for (int step = 0; step < 400; ++step) {
      const uint32_t u = static_cast<uint32_t>(next(units));
      clock[u] += next(40);  // each unit's own time; units drift apart
      uint64_t expected = clock[u];
      if (heap.size() >= capacity) {
        while (!heap.empty() && heap.top() <= expected) heap.pop();
        if (heap.size() >= capacity) {
          expected = heap.top();
          heap.pop();
          ++heap_stalls;
        }
      }
      const uint64_t admitted = pool.admit(clock[u]);
      BOOST_TEST_REQUIRE(admitted == expected);
      clock[u] = admitted;
      const uint64_t done = admitted + 200 + next(800);  // a hit or a miss, roughly in order
      pool.add(u, done);
      heap.push(done);
    }
    BOOST_TEST(pool.stalls() == heap_stalls);
    all_stalls += heap_stalls;
  }
  BOOST_TEST(all_stalls > 10000u);  // the traces do fill their pools
}
