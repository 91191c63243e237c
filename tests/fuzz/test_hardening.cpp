// Regression tests for the bugs the fuzz harnesses (and the review that came with them) found;
// docs/reliability.md lists them. The inputs the harnesses found are also replayed as they are
// (tests/fuzz/regressions/, ctest fuzz_replay_*).
#define BOOST_TEST_MODULE hardening
#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <vector>

#include "tma/config/arch_config_yaml.h"
#include "tma/golden/golden_case.h"
#include "tma/reference/reference_engine.h"

using namespace tma;

namespace {

// 2D u8 tiled map over a small image.
TensorMap tiled_2d(uint64_t dim1, uint64_t stride) {
  TensorMap m;
  m.mode = TensorMode::tiled;
  m.dtype = DataType::u8;
  m.rank = 2;
  m.dims = {16, dim1, 0, 0, 0};
  m.strides = {stride, 0, 0, 0};
  m.box = {16, 1, 1, 1, 1};
  return m;
}

// Interleaved (16B) 3D u64 map whose box rows are 32 bytes, swizzled 128B: 29 rows end at byte 928,
// in the middle of a 128-byte line (896..1023) whose swizzle moves row 28's first bytes to 1008..1023.
TensorMap interleaved_swizzled() {
  TensorMap m;
  m.mode = TensorMode::tiled;
  m.dtype = DataType::u64;
  m.rank = 3;
  m.dims = {2, 1, 29, 0, 0};
  m.strides = {32, 32, 0, 0};
  m.box = {2, 1, 29, 1, 1};
  m.interleave = Interleave::b16;
  m.swizzle = SwizzleMode::b128;
  return m;
}

}  // namespace

// global_address + coordinate x stride passed 2^64 and wrapped to offset 0: the load read the start
// of the image and reported ok. The access is outside the image: a fault.
BOOST_AUTO_TEST_CASE(reference_address_past_2_64_faults) {
  const TensorMap m = tiled_2d((uint64_t{1} << 32) - 1, uint64_t{1} << 39);
  TmaOp op;
  op.coords = {0, 1 << 25, 0, 0, 0};  // 2^25 x 2^39 = 2^64
  std::vector<uint8_t> global = word_hash_image(4096), smem(228 * 1024, 0xCD);
  const OpResult r = reference_execute(m, op, global, smem);
  BOOST_TEST(to_string(r.outcome) == "fault");
  BOOST_TEST(smem[0] == 0xCD);
  // One row lower the same map reads inside the image as before.
  op.coords = {0, 0, 0, 0, 0};
  BOOST_TEST(to_string(reference_execute(m, op, global, smem).outcome) == "ok");
  BOOST_TEST(smem[0] == global[0]);
}

// An address at or past 2^63 used to turn negative and read as the out-of-bound fill.
BOOST_AUTO_TEST_CASE(reference_address_past_2_63_faults) {
  TensorMap m = tiled_2d(4, 16);
  m.global_address = uint64_t{1} << 63;
  TmaOp op;
  std::vector<uint8_t> global = word_hash_image(4096), smem(228 * 1024, 0xCD);
  BOOST_TEST(to_string(reference_execute(m, op, global, smem).outcome) == "fault");
}

// The swizzle moved bytes of the last rows past the end of a shared memory whose size is not a
// multiple of 128 (ASan: heap-buffer-overflow in box_load). Such a box does not fit: a fault.
BOOST_AUTO_TEST_CASE(reference_swizzled_rows_stay_inside_smem) {
  const TensorMap m = interleaved_swizzled();
  TmaOp op;
  std::vector<uint8_t> global = word_hash_image(4096);
  std::vector<uint8_t> smem(928, 0xCD);
  BOOST_TEST(to_string(reference_execute(m, op, global, smem).outcome) == "fault");
  smem.assign(1024, 0xCD);  // whole lines: the load runs and fills the swizzled line
  const OpResult r = reference_execute(m, op, global, smem);
  BOOST_TEST(to_string(r.outcome) == "ok");
  BOOST_TEST(r.tx_bytes == 29u * 32u);
  BOOST_TEST(smem[1008] == global[28 * 32]);
}

// apply_arch_overrides took "nan": a NaN clock, or a NaN cast to an integer field (UBSan).
BOOST_AUTO_TEST_CASE(arch_override_nan_is_refused) {
  for (const char* o : {"sm_clock_mhz=nan", "dram.bytes_per_cycle=NAN", "sm_count=-nan", "l2.capacity_bytes=nan"}) {
    ArchConfig a;
    BOOST_CHECK_THROW(apply_arch_overrides(a, {o}), std::runtime_error);
  }
  ArchConfig a;
  apply_arch_overrides(a, {"sm_clock_mhz=1500.5", "sm_count=8"});
  BOOST_TEST(a.sm_clock_mhz == 1500.5);
  BOOST_TEST(a.sm_count == 8u);
}
