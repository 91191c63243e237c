// libFuzzer harness: the project's 128-byte descriptor decoder (model/descriptor_codec.h,
// decode_descriptor) on any 128 bytes (shorter inputs are padded with zeros, longer ones cut).
// The bytes sit in a heap block of exactly 128, so a read past bytes[127] is an ASan report.
// An accepted string must be the encoding of exactly one map: encode(decode(b)) == b.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "tma/descriptor/descriptor_codec.h"
#include "tma/descriptor/descriptor_validation.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tma;
  std::unique_ptr<uint8_t[]> bytes(new uint8_t[kDescriptorBytes]());
  std::memcpy(bytes.get(), data, std::min(size, kDescriptorBytes));
  std::string why;
  const auto m = decode_descriptor(bytes.get(), &why);
  if (!m) {
    if (why.empty()) fuzz::fail("refusal without a reason");
    return 0;
  }
  for (GpuArch arch : {GpuArch::sm90, GpuArch::sm100}) (void)validate_tensor_map(*m, arch);
  if (canonical_form(*m) != *m) fuzz::fail("decode_descriptor returned a map not in canonical form");
  std::array<uint8_t, kDescriptorBytes> again{};
  try {
    again = encode_descriptor(*m);
  } catch (const std::invalid_argument& e) {
    fuzz::fail(std::string("a decoded map does not encode: ") + e.what());
  }
  if (std::memcmp(again.data(), bytes.get(), kDescriptorBytes) != 0) fuzz::fail("encode(decode(b)) != b");
  return 0;
}
