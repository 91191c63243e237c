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
  // `timescale_ps`: one VCD time unit in picoseconds (the clock period).
  VcdWriter(const std::string& path, uint64_t timescale_ps);
  ~VcdWriter();
  bool ok() const { return file_ != nullptr; }
  // Declare every signal before the first sample. Returns its index.
  size_t add_signal(const std::string& scope, const std::string& name, int width);
  // Records the values of all signals at `cycle` (only changes are written).
  void sample(uint64_t cycle, const std::vector<uint64_t>& values);

 private:
  void header();
  std::FILE* file_;
  uint64_t timescale_ps_;
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
