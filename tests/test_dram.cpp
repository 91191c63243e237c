// The DRAM's pages: row misses keep a bank busy, and the controller's scheduler window lets
// accesses to a page opened a little earlier (or, from an SM running ahead, a little later) find
// it open although other pages came between. This is what makes L2 promotion pay on silicon
// for narrow, column-ordered streams (docs/calibration.md). Each DRAM is driven directly through
// its target socket, at chosen cycles, once the design is elaborated.
#define BOOST_TEST_MODULE dram
#include <boost/test/unit_test.hpp>

#include <systemc>
#include <tlm_utils/simple_initiator_socket.h>

#include <algorithm>
#include <memory>
#include <vector>
#include <string>

#include "tma/memory/dram.h"
#include "tma/core/tlm_payloads.h"

using namespace tma;

int sc_main(int, char**) { return 0; }

namespace {

// Round numbers: 1 GHz, one channel of one bank, 2 KB pages, a row miss costs 50 cycles, bytes
// move at 32 a cycle, accounted cycle by cycle, no access latency on top.
ArchConfig dram_arch(uint32_t window, double bank_bytes_per_cycle = 0, uint32_t background_promoted = 0) {
  ArchConfig a;
  a.sm_clock_mhz = 1000;
  a.sim.bandwidth_window_cycles = 1;
  a.dram.bytes_per_cycle = 32;
  a.dram.latency = 0;
  a.dram.channels = 1;
  a.dram.banks = 1;
  a.dram.interleave_bytes = 256;
  a.dram.page_bytes = 2048;
  a.dram.row_miss_cycles = 50;
  a.dram.scheduler_window_cycles = window;
  a.dram.bank_bytes_per_cycle = bank_bytes_per_cycle;
  a.dram.background_promoted_fills = background_promoted;
  return a;
}

struct Driver : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Driver> out;
  explicit Driver(sc_core::sc_module_name n) : sc_module(n), out("out") {}
  // A read of `bytes` (32 unless said) at `cycle`, a demand fill or the promoted part of one;
  // returns the cycle its data is back.
  uint64_t read(uint64_t address, uint64_t cycle, uint32_t bytes = 32, bool promoted = false) {
    tlm::tlm_generic_payload gp;
    gp.set_command(tlm::TLM_READ_COMMAND);
    gp.set_address(address);
    gp.set_data_ptr(nullptr);
    gp.set_data_length(bytes);
    DramFillClass fill_class;
    fill_class.promoted = promoted;
    ScopedExtension<DramFillClass> scoped(gp, &fill_class);
    sc_core::sc_time delay(static_cast<double>(cycle), sc_core::SC_NS);
    out->b_transport(gp, delay);
    return static_cast<uint64_t>((sc_core::sc_time_stamp() + delay).to_seconds() * 1e9 + 0.5);
  }
};

struct Bench {
  std::unique_ptr<Dram> dram;
  std::unique_ptr<Driver> driver;
  Bench(const std::string& name, uint32_t window, double bank_bytes_per_cycle = 0, uint32_t background_promoted = 0)
      : Bench(name, dram_arch(window, bank_bytes_per_cycle, background_promoted)) {}
  Bench(const std::string& name, const ArchConfig& arch)
      : dram(std::make_unique<Dram>((name + "_dram").c_str(), arch)),
        driver(std::make_unique<Driver>((name + "_driver").c_str())) {
    driver->out.bind(dram->in);
  }
  double stat(const std::string& name) const {
    StatsRecord r;
    dram->collect_stats(r);
    for (const auto& [n, v] : r.values())
      if (n == name) return v;
    return -1;
  }
};

// One elaboration for the whole file: every bench is built first, then time starts.
struct Benches {
  Bench in_order{"in_order", 0}, windowed{"windowed", 500}, expiring{"expiring", 500}, early{"early", 500};
  // A bank that moves 8 bytes a cycle (the channel 32), pages kept open for 500 cycles.
  Bench bank_held{"bank_held", 500, 8}, fifo{"fifo", 500, 0, 0}, priority{"priority", 500, 0, 1};
  // The window of 500 cycles, and a bank that holds one page at a time.
  Bench tenure{"tenure", [] {
    ArchConfig a = dram_arch(500);
    a.dram.page_tenure = 1;
    return a;
  }()};
  // Each access costs the channel 32 bytes' worth on top of its data; promoted reads have priority
  // below demand, and are served as demand once they would wait 100 cycles.
  Bench overhead{"overhead", with_overhead_and_aging()};
  Bench aging{"aging", with_overhead_and_aging()};
  static ArchConfig with_overhead_and_aging() {
    ArchConfig a = dram_arch(500, 0, 1);
    a.dram.access_overhead_bytes = 32;
    a.dram.background_max_wait_cycles = 100;
    return a;
  }
  // A quarter of the pages slow: their reads take 100 cycles more.
  Bench slow_pages{"slow_pages", [] {
    ArchConfig a = dram_arch(500);
    a.dram.banks = 64;
    a.dram.slow_read_fraction = 0.25;
    a.dram.slow_read_extra_cycles = 100;
    return a;
  }()};
  // Page openings paced at one every 4 cycles; no bank cost, so they are the only cost of a miss.
  Bench paced{"paced", [] {
    ArchConfig a = dram_arch(500);
    a.dram.banks = 8;
    a.dram.row_miss_cycles = 0;
    a.dram.activations_per_cycle = 0.25;
    return a;
  }()};
  // Four channels of 8 bytes a cycle, a page per 256-byte chunk.
  Bench channels{"channels", [] {
    ArchConfig a = dram_arch(100000);
    a.dram.channels = 4;
    a.dram.page_bytes = 256;
    a.dram.row_miss_cycles = 0;
    return a;
  }()};
  Benches() { sc_core::sc_start(sc_core::SC_ZERO_TIME); }
};
Benches& benches() {
  static Benches b;
  return b;
}

constexpr uint64_t kPage0 = 0, kPage1 = 2048;

}  // namespace

BOOST_AUTO_TEST_CASE(one_open_page_in_arrival_order) {
  Bench& b = benches().in_order;
  BOOST_TEST(b.driver->read(kPage0, 0) == 51u);        // opens page 0 (50), then one cycle of data
  BOOST_TEST(b.driver->read(kPage1, 1) == 101u);       // the bank is busy until 50: opens page 1 at 100
  BOOST_TEST(b.driver->read(kPage0 + 32, 2) == 151u);  // page 0 again: opened a second time
  BOOST_TEST(b.stat("row_misses") == 3);
  BOOST_TEST(b.stat("row_hits") == 0);
}

BOOST_AUTO_TEST_CASE(the_scheduler_groups_accesses_to_a_page_opened_within_its_window) {
  Bench& b = benches().windowed;
  BOOST_TEST(b.driver->read(kPage0, 0) == 51u);
  BOOST_TEST(b.driver->read(kPage1, 1) == 101u);
  // Page 0 was opened 2 cycles ago: the controller serves this access with that activation,
  // ahead of page 1's (first-ready first): its data moves at once, at cycle 2.
  BOOST_TEST(b.driver->read(kPage0 + 32, 2) == 3u);
  BOOST_TEST(b.stat("row_misses") == 2);
  BOOST_TEST(b.stat("row_hits") == 1);
}

BOOST_AUTO_TEST_CASE(a_page_opened_longer_ago_than_the_window_is_opened_again) {
  Bench& b = benches().expiring;
  BOOST_TEST(b.driver->read(kPage0, 0) == 51u);
  BOOST_TEST(b.driver->read(kPage0 + 32, 400) == 401u);   // within 500 cycles: open
  BOOST_TEST(b.driver->read(kPage0 + 64, 1000) == 1051u);  // 1000 after its opening: a row miss
  BOOST_TEST(b.stat("row_misses") == 2);
  BOOST_TEST(b.stat("row_hits") == 1);
}

BOOST_AUTO_TEST_CASE(the_window_holds_for_accesses_that_arrive_out_of_cycle_order) {
  // An SM that ran ahead (temporal decoupling) reports an access at a later cycle before another
  // SM's earlier one to the same page: still one activation.
  Bench& b = benches().early;
  b.driver->read(kPage0, 300);
  b.driver->read(kPage0 + 32, 100);
  BOOST_TEST(b.stat("row_misses") == 1);
  BOOST_TEST(b.stat("row_hits") == 1);
}

BOOST_AUTO_TEST_CASE(with_page_tenure_a_page_is_open_until_the_bank_opens_another) {
  // As in the windowed case: page 1's opening waits for the bank until 100, so an access to page 0
  // at 2 is still grouped with page 0's opening. Once page 1's opening is done (100), page 0
  // is closed: an access to it at 150 opens it again (the bank is free from 100: 150 + 50), where
  // the window alone would find it open (silicon: two reads of one page 0.5-1 us apart under load
  // share an opening about half the time, 1.5 us apart rarely; page_share.csv).
  Bench& b = benches().tenure;
  BOOST_TEST(b.driver->read(kPage0, 0) == 51u);
  BOOST_TEST(b.driver->read(kPage1, 1) == 101u);
  BOOST_TEST(b.driver->read(kPage0 + 32, 2) == 3u);
  BOOST_TEST(b.driver->read(kPage0 + 64, 150) == 201u);
  BOOST_TEST(b.stat("row_misses") == 3);
  BOOST_TEST(b.stat("row_hits") == 1);
  Bench& w = benches().windowed;  // the window alone: still open at 150
  BOOST_TEST(w.driver->read(kPage0 + 64, 150) == 151u);
}

BOOST_AUTO_TEST_CASE(a_bank_is_held_while_its_data_moves) {
  Bench& b = benches().bank_held;
  // 64 bytes: the page opens (50), the channel would move them in 2 cycles but the bank in 8.
  BOOST_TEST(b.driver->read(kPage0, 0, 64) == 58u);
  // A page hit on the same bank waits for the bank: 58 + 32 / 8.
  BOOST_TEST(b.driver->read(kPage0 + 64, 1, 32) == 62u);
  BOOST_TEST(b.stat("row_misses") == 1);
  BOOST_TEST(b.stat("row_hits") == 1);
}

BOOST_AUTO_TEST_CASE(without_priority_a_promoted_fill_delays_the_demand_behind_it) {
  Bench& b = benches().fifo;
  BOOST_TEST(b.driver->read(kPage0, 0, 256, true) == 58u);  // page opened at 50, 256 B at 32 a cycle
  BOOST_TEST(b.driver->read(kPage0 + 256, 50, 32) == 59u);  // then the demand, behind it
  BOOST_TEST(b.stat("promoted_read_bytes") == 256);        // counted, but served in arrival order
}

BOOST_AUTO_TEST_CASE(with_priority_demand_passes_promoted_fills_and_they_take_what_is_left) {
  Bench& b = benches().priority;
  BOOST_TEST(b.driver->read(kPage0, 0, 256, true) == 58u);   // the promoted part, alone: as before
  BOOST_TEST(b.driver->read(kPage0 + 256, 50, 32) == 51u);   // demand is timed as if it were not there
  // A promoted fill after the demand queues behind all that was booked: 256 + 32 + 256 bytes
  // from cycle 50.
  BOOST_TEST(b.driver->read(kPage0 + 512, 50, 256, true) == 67u);
  BOOST_TEST(b.stat("promoted_read_bytes") == 512);
  BOOST_TEST(b.stat("read_bytes") == 544);
}

BOOST_AUTO_TEST_CASE(each_access_costs_the_channel_its_overhead_but_a_promoted_continuation_does_not) {
  Bench& b = benches().overhead;
  BOOST_TEST(b.driver->read(kPage0, 0, 64) == 53u);       // page opened at 50: 64 + 32 bytes at 32 a cycle
  BOOST_TEST(b.driver->read(kPage0 + 64, 60, 32) == 62u);  // a page hit: 32 + 32 bytes
  // Two small accesses take longer than one of their size: 64 bytes as two is 4 cycles, as one 3.
  BOOST_TEST(b.driver->read(kPage0 + 128, 100, 32) == 102u);
  BOOST_TEST(b.driver->read(kPage0 + 160, 100, 32) == 104u);
  // The promoted rest of a fill is the same access continued: its data only (64 bytes, 2 cycles).
  BOOST_TEST(b.driver->read(kPage0 + 192, 200, 64, true) == 202u);
  BOOST_TEST(b.stat("read_bytes") == 224);
}

BOOST_AUTO_TEST_CASE(a_promoted_read_starved_by_demand_is_served_as_demand_after_the_longest_wait) {
  Bench& b = benches().aging;
  BOOST_TEST(b.driver->read(kPage0, 0, 32) == 52u);  // opens page 0
  // Demand books the channel for 400 cycles from cycle 100: 200 reads of 32 (+32) bytes.
  uint64_t last = 0;
  for (int i = 0; i < 200; ++i) last = b.driver->read(kPage0 + 32 * (i % 64), 100, 32);
  BOOST_TEST(last == 500u);
  // A promoted read at 100 would wait behind all of it: more than 100 cycles, so it is served
  // as demand instead (from 200 on, behind what demand booked: 32 bytes, 1 cycle).
  BOOST_TEST(b.driver->read(kPage0 + 256, 100, 32, true) == 501u);
  BOOST_TEST(b.stat("aged_promoted_reads") == 1);
  // It took demand's bandwidth: the next demand read (32 + 32 bytes) ends at 501 + 2, where
  // without aging it would end at 500 + 2 (a promoted read is not in demand's books).
  BOOST_TEST(b.driver->read(kPage0 + 288, 100, 32) == 503u);
  // A promoted read with nothing before it keeps its low priority.
  b.driver->read(kPage0 + 320, 5000, 32, true);
  BOOST_TEST(b.stat("aged_promoted_reads") == 1);
}

BOOST_AUTO_TEST_CASE(a_fixed_share_of_pages_is_slow_to_read) {
  Bench& b = benches().slow_pages;
  // 400 pages read once each, far apart in time (no queueing): a read takes its 1 cycle of data
  // and 50 of page opening, 100 more if its page is slow. About a quarter are, each for good.
  std::vector<bool> slow;
  for (uint64_t p = 0; p < 400; ++p) {
    const uint64_t t = 1000 * (p + 1);
    const uint64_t took = b.driver->read(p * 2048, t) - t;
    BOOST_TEST((took == 51 || took == 151), "page " << p << " took " << took);
    slow.push_back(took == 151);
  }
  const double share = std::count(slow.begin(), slow.end(), true) / 400.0;
  BOOST_TEST(share > 0.18);
  BOOST_TEST(share < 0.32);
  BOOST_TEST(b.stat("slow_reads") == std::count(slow.begin(), slow.end(), true));
  // The same pages again, another part of each page, long after (opened again): the same ones
  // are slow.
  for (uint64_t p = 0; p < 400; ++p) {
    const uint64_t t = 1000 * (p + 401);
    BOOST_TEST(b.driver->read(p * 2048 + 1024, t) - t == (slow[p] ? 151u : 51u), "page " << p);
  }
}

BOOST_AUTO_TEST_CASE(page_openings_are_paced_and_page_hits_pass_them) {
  Bench& b = benches().paced;
  // Four pages opened at cycle 0: their activations take turns, 4 cycles each, then one cycle of
  // data each.
  for (uint64_t k = 0; k < 4; ++k) BOOST_TEST(b.driver->read(k * kPage1, 0) == 4 * (k + 1) + 1);
  // A read of an open page needs no activation: served at once.
  BOOST_TEST(b.driver->read(kPage0 + 32, 0) == 1u);
  BOOST_TEST(b.stat("row_misses") == 4);
  BOOST_TEST(b.stat("row_hits") == 1);
}

BOOST_AUTO_TEST_CASE(consecutive_chunks_go_to_every_channel_and_no_two_share_a_page) {
  Bench& b = benches().channels;
  // 64 runs of four 256-byte chunks, each run read at once: the four take the four channels
  // (256 bytes at 8 a cycle each), whatever the run's rotation.
  for (uint64_t run = 0; run < 64; ++run) {
    const uint64_t t = 1000 * (run + 1);
    std::vector<uint64_t> done;
    for (uint64_t c = 0; c < 4; ++c) done.push_back(b.driver->read((4 * run + c) * 256, t, 256) - t);
    BOOST_TEST(*std::max_element(done.begin(), done.end()) == 32u, "run " << run);
  }
  // Every chunk is its own page of its channel: 256 openings, no hit (pages stay open all along).
  BOOST_TEST(b.stat("row_misses") == 256);
  BOOST_TEST(b.stat("row_hits") == 0);
}
