// libFuzzer harness: the driver CUtensorMap decoder (model/driver_descriptor.h,
// decode_driver_descriptor) on any 128 bytes plus an 8-byte global_base after them (short inputs
// are padded with zeros). The descriptor sits in a heap block of exactly 128 bytes, so a read past
// bytes[127] is an ASan report. A decoded map that has a driver encoding must decode back to
// itself from that encoding: decode(encode(decode(b))) == decode(b).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "tma/descriptor/descriptor_codec.h"
#include "tma/descriptor/descriptor_validation.h"
#include "tma/descriptor/driver_descriptor.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tma;
  std::unique_ptr<uint8_t[]> bytes(new uint8_t[kDriverDescriptorBytes]());
  std::memcpy(bytes.get(), data, std::min(size, kDriverDescriptorBytes));
  uint64_t global_base = 0;
  if (size > kDriverDescriptorBytes) {
    fuzz::Reader r(data + kDriverDescriptorBytes, size - kDriverDescriptorBytes);
    global_base = r.u64();
  }
  std::string why;
  const auto m = decode_driver_descriptor(bytes.get(), global_base, &why);
  if (!m) {
    if (why.empty()) fuzz::fail("refusal without a reason");
    return 0;
  }
  for (GpuArch arch : {GpuArch::sm90, GpuArch::sm100}) (void)validate_tensor_map(*m, arch);
  if (canonical_form(*m) != *m) fuzz::fail("decode_driver_descriptor returned a map not in canonical form");
  std::array<uint8_t, kDriverDescriptorBytes> again{};
  try {
    again = encode_driver_descriptor(*m, global_base);
  } catch (const std::invalid_argument&) {
    return 0;  // e.g. a box of 2^32 bytes or more: documented
  }
  const auto back = decode_driver_descriptor(again.data(), global_base, &why);
  if (!back) fuzz::fail("the re-encoding of a decoded descriptor does not decode: " + why);
  if (*back != *m) fuzz::fail("decode(encode(decode(b))) != decode(b)");
  return 0;
}
