#include "tma/memory/global_memory.h"

#include <algorithm>
#include <cstring>

namespace tma {

void GlobalMemory::fill_page(uint64_t index, uint8_t* dst) const {
  if (fill_ == MemoryFill::zero) {
    std::memset(dst, 0, kPageBytes);
    return;
  }
  const uint64_t first_word = index * kPageBytes / 4;
  for (uint64_t w = 0; w < kPageBytes / 4; ++w) {
    const uint32_t v = static_cast<uint32_t>((first_word + w) * 2654435761u + 0x12345u);
    std::memcpy(dst + 4 * w, &v, 4);
  }
}

void GlobalMemory::fill_range(uint64_t address, uint8_t* dst, uint64_t bytes) const {
  if (fill_ == MemoryFill::zero) {
    std::memset(dst, 0, bytes);
    return;
  }
  // Whole words at a time; the partial words at either end byte by byte.
  auto word = [](uint64_t w) { return static_cast<uint32_t>(w * 2654435761u + 0x12345u); };
  uint64_t i = 0;
  while (i < bytes && (address + i) % 4) {
    const uint64_t a = address + i;
    dst[i++] = static_cast<uint8_t>(word(a / 4) >> (8 * (a % 4)));
  }
  for (; i + 4 <= bytes; i += 4) {
    const uint32_t v = word((address + i) / 4);
    std::memcpy(dst + i, &v, 4);
  }
  for (; i < bytes; ++i) {
    const uint64_t a = address + i;
    dst[i] = static_cast<uint8_t>(word(a / 4) >> (8 * (a % 4)));
  }
}

std::vector<uint8_t>& GlobalMemory::page(uint64_t index) {
  auto& slot = pages_[index];
  if (!slot) {
    slot = std::make_unique<std::vector<uint8_t>>(kPageBytes);
    fill_page(index, slot->data());
  }
  return *slot;
}

void GlobalMemory::read(uint64_t address, uint8_t* dst, uint64_t bytes) const {
  while (bytes) {
    const uint64_t index = address / kPageBytes, off = address % kPageBytes;
    const uint64_t n = std::min(bytes, kPageBytes - off);
    auto it = pages_.find(index);
    if (it != pages_.end()) {
      std::memcpy(dst, it->second->data() + off, n);
    } else {
      fill_range(address, dst, n);  // untouched: generate just these bytes
    }
    address += n;
    dst += n;
    bytes -= n;
  }
}

void GlobalMemory::write(uint64_t address, const uint8_t* src, uint64_t bytes) {
  while (bytes) {
    const uint64_t index = address / kPageBytes, off = address % kPageBytes;
    const uint64_t n = std::min(bytes, kPageBytes - off);
    std::memcpy(page(index).data() + off, src, n);
    address += n;
    src += n;
    bytes -= n;
  }
}

uint8_t* GlobalMemory::writable(uint64_t address, uint64_t bytes) {
  const uint64_t off = address % kPageBytes;
  if (off + bytes > kPageBytes) return nullptr;
  return page(address / kPageBytes).data() + off;
}

}  // namespace tma
