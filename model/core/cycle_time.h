// Model time is kept in whole SM clock cycles; SystemC time is cycles x the clock period.
#pragma once

#include <systemc>

#include <cmath>
#include <cstdint>

namespace tma {

// How far apart two cycles are, whichever is first: units that run ahead of each other (temporal
// decoupling) report events out of cycle order, so a "within N cycles" rule holds both ways.
inline uint64_t cycles_apart(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

class CycleClock {
 public:
  explicit CycleClock(double mhz = 1000)
      : period_ps_(std::llround(1e6 / mhz)),
        ticks_per_ps_(sc_core::sc_time(1, sc_core::SC_PS).value()),
        ticks_per_cycle_(static_cast<uint64_t>(period_ps_) * ticks_per_ps_) {}
  uint64_t period_ps() const { return static_cast<uint64_t>(period_ps_); }
  sc_core::sc_time to_time(uint64_t cycles) const { return sc_core::sc_time::from_value(cycles * ticks_per_cycle_); }
  // Cycles of a SystemC time, rounded up to the next clock edge.
  uint64_t to_cycles(const sc_core::sc_time& t) const { return (t.value() + ticks_per_cycle_ - 1) / ticks_per_cycle_; }
  uint64_t now_cycles() const { return to_cycles(sc_core::sc_time_stamp()); }

 private:
  long long period_ps_;
  uint64_t ticks_per_ps_;     // SystemC time units in a picosecond (the resolution)
  uint64_t ticks_per_cycle_;
};

}  // namespace tma
