#include "tma/scenario/vcd_writer.h"

#include <cinttypes>

namespace tma {

VcdWriter::VcdWriter(const std::string& path, uint64_t period_ps)
    : file_(std::fopen(path.c_str(), "w")), period_ps_(period_ps) {}

VcdWriter::~VcdWriter() {
  if (file_) std::fclose(file_);
}

size_t VcdWriter::add_signal(const std::string& scope, const std::string& name, int width) {
  // Identifiers from the printable range '!'..'~', as short as possible.
  size_t n = signals_.size();
  std::string id;
  do {
    id += static_cast<char>('!' + n % 94);
    n /= 94;
  } while (n);
  signals_.push_back(Signal{scope, name, id, width, 0, false});
  return signals_.size() - 1;
}

void VcdWriter::header() {
  std::fprintf(file_, "$version tma-sim $end\n$timescale 1 ps $end\n");
  // Scopes in the order they were declared (sm0, sm1, ... sm10: not sorted as text).
  std::vector<std::string> scopes;
  for (const Signal& s : signals_)
    if (scopes.empty() || scopes.back() != s.scope) scopes.push_back(s.scope);
  for (const std::string& scope : scopes) {
    std::fprintf(file_, "$scope module %s $end\n", scope.c_str());
    for (const Signal& s : signals_)
      if (s.scope == scope) std::fprintf(file_, "$var wire %d %s %s $end\n", s.width, s.id.c_str(), s.name.c_str());
    std::fprintf(file_, "$upscope $end\n");
  }
  std::fprintf(file_, "$enddefinitions $end\n");
  header_done_ = true;
}

void VcdWriter::sample(uint64_t cycle, const std::vector<uint64_t>& values) {
  if (!file_) return;
  if (!header_done_) header();
  const uint64_t time = cycle * period_ps_;
  bool stamped = false;
  for (size_t i = 0; i < signals_.size() && i < values.size(); ++i) {
    Signal& s = signals_[i];
    if (s.written && s.last == values[i]) continue;
    if (!stamped && (!stamped_ || time != last_time_)) {  // one time stamp per time
      std::fprintf(file_, "#%" PRIu64 "\n", time);
      stamped_ = true;
      last_time_ = time;
    }
    stamped = true;
    std::string bits;
    for (int b = s.width - 1; b >= 0; --b) bits += ((values[i] >> b) & 1) ? '1' : '0';
    if (s.width == 1) std::fprintf(file_, "%c%s\n", bits[0], s.id.c_str());
    else std::fprintf(file_, "b%s %s\n", bits.c_str(), s.id.c_str());
    s.last = values[i];
    s.written = true;
  }
}

void VcdWriter::finish(uint64_t cycle) {
  if (!file_) return;
  if (!header_done_) header();
  const uint64_t time = cycle * period_ps_;
  if (!stamped_ || time > last_time_) std::fprintf(file_, "#%" PRIu64 "\n", time);
  std::fclose(file_);
  file_ = nullptr;
}

}  // namespace tma
