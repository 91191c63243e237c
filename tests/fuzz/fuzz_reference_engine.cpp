// libFuzzer harness: the reference engine (tb/reference_engine.h, reference_execute) on any
// descriptor and operation that validation accepts (for sm_90 or sm_100, as the input says), over
// a global image of 0..1 MiB and a shared memory of 0..256 KiB, both sized by the input (layout:
// fuzz_support.h, EngineInput). The engine must never read or write outside the two vectors (ASan
// sees every byte of them) and must report a global access outside the image as a fault.
// Work per input is capped: maps whose box (or pixel rows x channels) has more than 64K units
// are skipped, so one input stays fast.
#include <cstdint>
#include <vector>

#include "tma/descriptor/descriptor_validation.h"
#include "fuzz_support.h"
#include "tma/golden/golden_case.h"
#include "tma/reference/reference_engine.h"

namespace {

constexpr uint64_t kMaxUnits = 64 * 1024;

// An upper bound of the elements (or channel units) one operation touches.
uint64_t work_units(const tma::TensorMap& m, const tma::TmaOp& op) {
  using tma::TensorMode;
  switch (m.mode) {
    case TensorMode::tiled: {
      uint64_t n = 1;
      for (int i = 0; i < m.rank; ++i) n *= m.box[i];  // validated: rank <= 5, box <= 256
      return n;
    }
    case TensorMode::gather4: return 4ull * m.box[0];
    case TensorMode::im2col: return uint64_t{m.pixels_per_column} * m.channels_per_pixel;
    case TensorMode::im2col_w: return (uint64_t{m.pixels_per_column} + op.w_halo) * m.channels_per_pixel;
    case TensorMode::im2col_w128: return 4 * (32ull + op.w_halo) * m.channels_per_pixel;
  }
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tma;
  fuzz::Reader r(data, size);
  const fuzz::EngineInput in = fuzz::read_engine_input(r);
  ReferenceOptions opt;
  opt.arch = in.sm100 ? GpuArch::sm100 : GpuArch::sm90;
  if (validate_tensor_map(in.map, opt.arch)) return -1;  // not a map the driver encodes: not kept
  if (work_units(in.map, in.op) > kMaxUnits) return -1;
  // The global image is word_hash (as golden cases); shared memory is the same sequence from word
  // smem_fill_seed % 65536. Both are cut from one precomputed buffer: filling them anew each run
  // would cost more than most operations.
  static const std::vector<uint8_t> pristine =
      word_hash_image(fuzz::EngineInput::kMaxGlobal + fuzz::EngineInput::kMaxSmem + 4 * 65536);
  std::vector<uint8_t> global(pristine.begin(), pristine.begin() + in.global_size);
  const size_t smem_start = 4 * size_t{in.smem_fill_seed % 65536};
  std::vector<uint8_t> smem(pristine.begin() + smem_start, pristine.begin() + smem_start + in.smem_size);
  const OpResult res = reference_execute(in.map, in.op, global, smem, opt);
  if (global.size() != in.global_size || smem.size() != in.smem_size) fuzz::fail("the engine resized an image");
  if (res.outcome == Outcome::encode_error) fuzz::fail("encode_error for a map validation accepts: " + res.reason);
  if (res.outcome == Outcome::fault && res.reason.empty()) fuzz::fail("a fault without a reason");
  return 0;
}
