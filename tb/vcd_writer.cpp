#include "vcd_writer.h"

#include <cinttypes>
#include <map>

namespace tma {

VcdWriter::VcdWriter(const std::string& path, uint64_t timescale_ps)
    : file_(std::fopen(path.c_str(), "w")), timescale_ps_(timescale_ps) {}

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
  std::fprintf(file_, "$version tma-sim $end\n$timescale %" PRIu64 " ps $end\n", timescale_ps_);
  std::map<std::string, std::vector<const Signal*>> scopes;
  for (const Signal& s : signals_) scopes[s.scope].push_back(&s);
  for (const auto& [scope, list] : scopes) {
    std::fprintf(file_, "$scope module %s $end\n", scope.c_str());
    for (const Signal* s : list) std::fprintf(file_, "$var wire %d %s %s $end\n", s->width, s->id.c_str(), s->name.c_str());
    std::fprintf(file_, "$upscope $end\n");
  }
  std::fprintf(file_, "$enddefinitions $end\n");
  header_done_ = true;
}

void VcdWriter::sample(uint64_t cycle, const std::vector<uint64_t>& values) {
  if (!file_) return;
  if (!header_done_) header();
  bool stamped = false;
  for (size_t i = 0; i < signals_.size() && i < values.size(); ++i) {
    Signal& s = signals_[i];
    if (s.written && s.last == values[i]) continue;
    if (!stamped) {
      std::fprintf(file_, "#%" PRIu64 "\n", cycle);
      stamped = true;
    }
    std::string bits;
    for (int b = s.width - 1; b >= 0; --b) bits += ((values[i] >> b) & 1) ? '1' : '0';
    if (s.width == 1) std::fprintf(file_, "%c%s\n", bits[0], s.id.c_str());
    else std::fprintf(file_, "b%s %s\n", bits.c_str(), s.id.c_str());
    s.last = values[i];
    s.written = true;
  }
}

}  // namespace tma
