// libFuzzer harness: descriptor validation (model/descriptor_validation.h) on any TensorMap field
// values, enums outside their enumerators and negative ranks included (layout: fuzz_support.h).
// Beyond not crashing, what the headers promise of an accepted map is checked:
// - every map validate_tensor_map accepts fits the project's 128-byte encoding, and
//   decode_descriptor(encode_descriptor(m)) == canonical_form(m) (descriptor_codec.h);
// - a tiled or im2col map the sm_90 rules accept has a driver encoding unless its box is 2^32
//   bytes or more, and decodes back to canonical_form(m) (driver_descriptor.h).
#include <cstdint>
#include <stdexcept>
#include <string>

#include "tma/descriptor/descriptor_codec.h"
#include "tma/descriptor/descriptor_validation.h"
#include "tma/descriptor/driver_descriptor.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tma;
  fuzz::Reader r(data, size);
  const TensorMap m = fuzz::read_map(r);
  const uint64_t global_base = r.u64();
  for (GpuArch arch : {GpuArch::sm90, GpuArch::sm100}) {
    const auto err = validate_tensor_map(m, arch);
    if (err) {
      if (err->rule.empty() || err->message.empty()) fuzz::fail("refusal without a rule or a message");
      continue;
    }
    std::array<uint8_t, kDescriptorBytes> bytes{};
    try {
      bytes = encode_descriptor(m);
    } catch (const std::invalid_argument& e) {
      fuzz::fail(std::string("an accepted map does not encode: ") + e.what());
    }
    std::string why;
    const auto back = decode_descriptor(bytes.data(), &why);
    if (!back) fuzz::fail("the encoding of an accepted map does not decode: " + why);
    if (*back != canonical_form(m)) fuzz::fail("decode(encode(m)) != canonical_form(m)");

    if (arch != GpuArch::sm90 || (m.mode != TensorMode::tiled && m.mode != TensorMode::im2col)) continue;
    if (global_base + m.global_address < global_base) continue;  // the absolute address would wrap
    std::array<uint8_t, kDriverDescriptorBytes> driver{};
    try {
      driver = encode_driver_descriptor(m, global_base);
    } catch (const std::invalid_argument& e) {
      if (std::string(e.what()).find("bytes does not fit 32 bits") == std::string::npos)
        fuzz::fail(std::string("an sm_90-accepted map has no driver encoding: ") + e.what());
      continue;
    }
    const auto dback = decode_driver_descriptor(driver.data(), global_base, &why);
    if (!dback) fuzz::fail("the driver encoding of an accepted map does not decode: " + why);
    if (*dback != canonical_form(m)) fuzz::fail("decode_driver(encode_driver(m)) != canonical_form(m)");
  }
  return 0;
}
