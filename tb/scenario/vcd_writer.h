// A minimal VCD (IEEE 1364 value change dump) writer for integer signals sampled over time:
// queue occupancies, operations in flight, busy flags. Viewable in GTKWave.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace tma {

class VcdWriter {
 public:
  // Times are written in picoseconds (`$timescale 1 ps`): IEEE 1364 allows only 1, 10 or 100 of a
  // unit, and a clock period such as 505 ps (1980 MHz) is none of them. A cycle is `period_ps`.
  VcdWriter(const std::string& path, uint64_t period_ps);
  ~VcdWriter();
  bool ok() const { return file_ != nullptr; }
  // Declare every signal before the first sample; scopes are written in the order they are first
  // named. Returns its index.
  size_t add_signal(const std::string& scope, const std::string& name, int width);
  // Records the values of all signals at `cycle` (only changes are written).
  void sample(uint64_t cycle, const std::vector<uint64_t>& values);
  // Ends the dump at `cycle` (a last time stamp, so that viewers show the run to its end) and
  // closes the file. The destructor closes it too, without the time stamp.
  void finish(uint64_t cycle);

 private:
  void header();
  std::FILE* file_;
  uint64_t period_ps_;
  uint64_t last_time_ = 0;  // the last time stamp written, in ps
  bool stamped_ = false;
  struct Signal {
    std::string scope, name, id;
    int width;
    uint64_t last;
    bool written;
  };
  std::vector<Signal> signals_;
  bool header_done_ = false;
};

}  // namespace tma
