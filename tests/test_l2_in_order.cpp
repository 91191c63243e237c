// The L2's slices answering their reads in the order they came (l2.in_order_slices) and the
// requests in flight the SMs of a CPC share (CpcRequestPool, tma.cpc_outstanding_requests): the two
// rules that let silicon's fast SMs run ahead of the others and stay ahead (docs/calibration.md,
// "CPC pools and in-order slices"). The L2 and a DRAM are driven directly.
#define BOOST_TEST_MODULE l2_in_order
#include <boost/test/unit_test.hpp>

#include "l2_bench.h"
#include "tma/tma/cpc_request_pool.h"

using namespace tma;

int sc_main(int, char**) { return 0; }

namespace {

ArchConfig arch(uint32_t in_order_slices) {
  ArchConfig a = test::round_number_l2_arch(0);
  a.l2.in_order_slices = in_order_slices;
  return a;
}

struct Benches {
  // One slice that answers in order, and the same L2 without the rule.
  test::L2Bench in_order{"in_order", arch(1)}, any_order{"any_order", arch(0)};
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
