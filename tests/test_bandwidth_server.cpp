// BandwidthServer: the resource every link, L2 path and DRAM channel of the model books its bytes
// on. Its promise (model/bandwidth_server.h): requests arriving in order queue one behind the
// other; requests arriving out of order, or booked ahead of time, cost at most one window of
// timing error and never capacity.
#define BOOST_TEST_MODULE bandwidth_server
#include <boost/test/unit_test.hpp>

#include <systemc>

#include "tma/core/bandwidth_server.h"

using namespace tma;

// The model library links SystemC, whose main() calls sc_main; this test elaborates nothing.
int sc_main(int, char**) { return 0; }

namespace {
// 4 bytes a cycle in windows of 64 cycles: 256 bytes a window.
BandwidthServer server() { return BandwidthServer(4, 64); }
}  // namespace

BOOST_AUTO_TEST_CASE(requests_in_order_queue_behind_each_other) {
  BandwidthServer s = server();
  BOOST_TEST(s.serve(0, 64) == 16u);
  BOOST_TEST(s.serve(0, 64) == 32u);   // arrived with the first: behind it
  BOOST_TEST(s.serve(40, 8) == 42u);   // after an idle gap: from its arrival
  BOOST_TEST(s.serve(40, 8) == 44u);
  BOOST_TEST(s.bytes_served() == 144u);
}

BOOST_AUTO_TEST_CASE(a_request_larger_than_a_window_spills_into_the_next_ones) {
  BandwidthServer s = server();
  BOOST_TEST(s.serve(32, 1024) == 32u + 256u);  // 1024 bytes at 4 a cycle, from its arrival
  BOOST_TEST(s.serve(32, 4) == 289u);           // behind it
}

BOOST_AUTO_TEST_CASE(a_busy_server_delays_by_its_backlog) {
  BandwidthServer s = server();
  for (int i = 0; i < 10; ++i) s.serve(0, 256);  // ten windows' worth at once
  BOOST_TEST(s.serve(100, 4) == 641u);           // served after the backlog: 640 cycles of it
}

BOOST_AUTO_TEST_CASE(a_request_booked_ahead_late_in_a_window_leaves_the_window_to_earlier_arrivals) {
  // A read's return trip booked when its DRAM fill is asked for lands late in a window that has
  // not started yet; the requests that arrive in that window before it must still get the
  // window's capacity (they once found it used up to the late booking and spilled, one window
  // after another: a crossbar at a fifth of its capacity delayed reads by thousands of cycles).
  BandwidthServer s = server();
  for (uint64_t w = 0; w < 100; ++w) BOOST_TEST(s.serve(w * 64 + 62, 4) == w * 64 + 63);
  // Then 96 windows' worth arrives at cycle 0: the capacity left is 252 bytes a window, so it
  // ends within the 98th window, not after the hundred windows the early bookings reach.
  const uint64_t done = s.serve(0, 96 * 256);
  BOOST_TEST(done <= 98u * 64);
  BOOST_TEST(done >= 96u * 64);
}

BOOST_AUTO_TEST_CASE(an_out_of_order_arrival_ends_no_later_than_its_window) {
  BandwidthServer s = server();
  BOOST_TEST(s.serve(60, 16) == 64u);  // late in window 0, booked first
  // Earlier in the same window, reported afterwards (an SM that ran behind): it gets capacity in
  // window 0 and finishes by the window's end, not in window 1.
  const uint64_t done = s.serve(10, 64);
  BOOST_TEST(done >= 26u);
  BOOST_TEST(done <= 64u);
  // Window 0 has 176 bytes left; a request for more spills.
  BOOST_TEST(s.serve(10, 176) <= 64u);
  BOOST_TEST(s.serve(10, 4) == 65u);
}

BOOST_AUTO_TEST_CASE(settled_windows_are_forgotten_and_late_reports_book_at_the_oldest_open_one) {
  BandwidthServer s = server();
  s.serve(0, 256);
  s.retire_before(640);
  BOOST_TEST(s.serve(5, 4) == 641u);  // window 0 is settled: booked at window 10
}
