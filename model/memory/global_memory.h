// The global-memory backing store shared by every SM: sparse 64 KB pages created on first
// touch, so a scenario can describe gigabytes of tensors without holding them. Untouched bytes
// read as the configured fill (word_hash of the byte address, or zero).
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

namespace tma {

enum class MemoryFill : uint8_t { zero, word_hash };

class GlobalMemory {
 public:
  explicit GlobalMemory(MemoryFill fill = MemoryFill::word_hash) : fill_(fill) {}

  void read(uint64_t address, uint8_t* dst, uint64_t bytes) const;
  void write(uint64_t address, const uint8_t* src, uint64_t bytes);
  // In-place read-modify-write access to a range that does not cross a page.
  uint8_t* writable(uint64_t address, uint64_t bytes);

  uint64_t pages_touched() const { return pages_.size(); }
  static constexpr uint64_t kPageBytes = 64 * 1024;

 private:
  std::vector<uint8_t>& page(uint64_t index);
  void fill_page(uint64_t index, uint8_t* dst) const;
  void fill_range(uint64_t address, uint8_t* dst, uint64_t bytes) const;
  MemoryFill fill_;
  std::unordered_map<uint64_t, std::unique_ptr<std::vector<uint8_t>>> pages_;
};

}  // namespace tma
