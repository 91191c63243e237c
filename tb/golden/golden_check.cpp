#include "tma/golden/golden_check.h"

#include <cstdio>
#include <cstring>

#include "tma/descriptor/descriptor_codec.h"
#include "tma/descriptor/driver_descriptor.h"

namespace tma {

namespace {

std::string hex2(uint8_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", v);
  return buf;
}

// First index where the two differ, or -1.
int64_t first_difference(const uint8_t* expected, const uint8_t* actual, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (expected[i] != actual[i]) return static_cast<int64_t>(i);
  return -1;
}

}  // namespace

std::string check_driver_descriptor(const GoldenCase& c) {
  if (c.driver_descriptor.size() != kDriverDescriptorBytes) return "";
  // The descriptor holds the absolute address; the case's base is relative to an unknown allocation.
  uint64_t address;
  std::memcpy(&address, c.driver_descriptor.data(), 8);
  if (address < c.map.global_address) return c.name + ": driver descriptor: address below the case's base";
  std::string error;
  const auto decoded = decode_driver_descriptor(c.driver_descriptor.data(), address - c.map.global_address, &error);
  if (!decoded) return c.name + ": driver descriptor does not decode: " + error;
  if (*decoded != canonical_form(c.map)) return c.name + ": driver descriptor disagrees with tensor_map";
  return "";
}

std::vector<uint8_t> initial_smem(const GoldenCase& c, uint32_t capacity) {
  std::vector<uint8_t> smem(capacity, 0xCD);
  if (c.has_smem_fill) {
    const std::vector<uint8_t> fill = word_hash_image(c.smem_fill_size, c.smem_fill_seed);
    std::copy(fill.begin(), fill.begin() + std::min<size_t>(fill.size(), smem.size()), smem.begin());
  }
  return smem;
}

OpResult run_reference(const GoldenCase& c, std::vector<uint8_t>& global, std::vector<uint8_t>& smem) {
  ReferenceOptions opt;
  opt.arch = c.arch;
  return reference_execute(c.map, c.op, global, smem, opt);
}

CaseVerdict check_case(const GoldenCase& c, const CaseEngine& engine) {
  CaseVerdict v;
  std::vector<uint8_t> global = word_hash_image(c.global_size);
  std::vector<uint8_t> smem = initial_smem(c, 228 * 1024);
  const OpResult r = engine(c, global, smem);
  if (r.outcome != c.outcome) {
    v.message = c.name + ": outcome: expected " + to_string(c.outcome) + ", got " + to_string(r.outcome) +
                (r.reason.empty() ? "" : " (" + r.reason + ")");
    return v;
  }
  if (c.outcome != Outcome::ok) {
    v.passed = true;
    return v;
  }
  if (c.has_global_window) {
    const int64_t d = first_difference(c.global_window.data(), global.data() + c.global_window_offset,
                                       c.global_window.size());
    if (d >= 0) {
      const uint64_t at = c.global_window_offset + static_cast<uint64_t>(d);
      v.message = c.name + ": global byte " + std::to_string(at) + ": expected " + hex2(c.global_window[d]) +
                  ", got " + hex2(global[at]);
      return v;
    }
  } else {
    if (smem.size() < c.smem_bytes) {
      v.message = c.name + ": engine returned " + std::to_string(smem.size()) + " bytes of shared memory";
      return v;
    }
    const int64_t d = first_difference(c.smem_image.data(), smem.data(), c.smem_bytes);
    if (d >= 0) {
      v.message = c.name + ": smem byte " + std::to_string(d) + ": expected " + hex2(c.smem_image[d]) + ", got " +
                  hex2(smem[d]);
      return v;
    }
    if (c.tx_bytes && *c.tx_bytes != r.tx_bytes) {
      v.message = c.name + ": tx_bytes: expected " + std::to_string(*c.tx_bytes) + ", got " +
                  std::to_string(r.tx_bytes);
      return v;
    }
  }
  v.passed = true;
  return v;
}

}  // namespace tma
