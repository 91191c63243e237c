// The sm_90 CUtensorMap layout (model/driver_descriptor.h, docs/driver-descriptor.md) against
// the descriptors the driver wrote in the silicon captures: a few decoded field by field, then
// every committed .desc decoded, compared with its case's parameters and re-encoded byte for byte.
#define BOOST_TEST_MODULE driver_descriptor
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <random>
#include <sstream>
#include <stdexcept>

#include "tma/descriptor/descriptor_codec.h"
#include "tma/descriptor/driver_descriptor.h"
#include "tma/golden/golden_case.h"

#ifndef TMA_SOURCE_DIR
#error "TMA_SOURCE_DIR (the project root) must be defined"
#endif

using namespace tma;
namespace fs = std::filesystem;

namespace {

using Bytes = std::array<uint8_t, kDriverDescriptorBytes>;

std::string golden_dir(const std::string& sub) { return std::string(TMA_SOURCE_DIR) + "/tests/golden/" + sub; }

GoldenCase load(const std::string& name) {
  GoldenCase c = load_golden_case(golden_dir("silicon") + "/" + name + ".yaml");
  BOOST_TEST_REQUIRE(c.driver_descriptor.size() == kDriverDescriptorBytes);
  return c;
}

uint64_t address_field(const std::vector<uint8_t>& d) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{d[i]} << (8 * i);
  return v;
}

// Decodes a committed case with the allocation base of its capture run (known here) and
// checks the result against the case's YAML, and the re-encoding against the bytes.
TensorMap decode_case(const std::string& name, uint64_t run_base) {
  GoldenCase c = load(name);
  std::string error;
  auto m = decode_driver_descriptor(c.driver_descriptor.data(), run_base, &error);
  BOOST_TEST_REQUIRE(m.has_value(), name << ": " << error);
  BOOST_TEST((*m == canonical_form(c.map)), name << ": decoded map differs from the YAML");
  Bytes again = encode_driver_descriptor(*m, run_base);
  BOOST_TEST((std::vector<uint8_t>(again.begin(), again.end()) == c.driver_descriptor),
             name << ": re-encoding differs from the driver's bytes");
  return *m;
}

constexpr uint64_t kRunA = 0x7fb400800000;  // the capture run of t0001..t0341 (and more)

}  // namespace

BOOST_AUTO_TEST_CASE(tiled_rank1_u8) {
  TensorMap m = decode_case("t0001", kRunA);
  BOOST_TEST((m.mode == TensorMode::tiled));
  BOOST_TEST((m.dtype == DataType::u8));
  BOOST_TEST(m.rank == 1);
  BOOST_TEST(m.global_address == 992u);
  BOOST_TEST(m.dims[0] == 85u);
  BOOST_TEST(m.box[0] == 64u);
  BOOST_TEST((m.swizzle == SwizzleMode::none));
}

BOOST_AUTO_TEST_CASE(tiled_rank5_element_strides) {
  TensorMap m = decode_case("t0003", kRunA);
  BOOST_TEST((m.dtype == DataType::u16));
  BOOST_TEST(m.rank == 5);
  BOOST_TEST(m.global_address == 208u);
  BOOST_TEST((m.dims == std::array<uint64_t, 5>{80, 3, 26, 16, 13}));
  BOOST_TEST((m.strides == std::array<uint64_t, 4>{208, 624, 16224, 259600}));
  BOOST_TEST((m.box == std::array<uint32_t, 5>{32, 5, 6, 7, 4}));
  BOOST_TEST((m.element_strides == std::array<uint32_t, 5>{1, 1, 7, 1, 1}));
  BOOST_TEST((m.swizzle == SwizzleMode::b64));
  BOOST_TEST((m.l2_promotion == L2Promotion::b64));
  BOOST_TEST((m.oob_fill == OobFill::zero));
}

BOOST_AUTO_TEST_CASE(tf32_nan_fill) {
  // tf32 is the f32 type code plus a separate tf32 bit.
  TensorMap m = decode_case("t0022", kRunA);
  BOOST_TEST((m.dtype == DataType::tf32));
  BOOST_TEST((m.oob_fill == OobFill::nan));
  BOOST_TEST((m.l2_promotion == L2Promotion::b128));
  decode_case("t0246", kRunA);
}

BOOST_AUTO_TEST_CASE(interleave) {
  BOOST_TEST((decode_case("t0262", kRunA).interleave == Interleave::b16));
  BOOST_TEST((decode_case("t0263", kRunA).interleave == Interleave::b32));
  BOOST_TEST((decode_case("t0268", kRunA).interleave == Interleave::b16));
}

BOOST_AUTO_TEST_CASE(stride_bits_36_to_39) {
  // strides[3] = 2^40 - 16: its top nibble lives apart from the other 32 bits.
  TensorMap m = decode_case("t0477", 0x7f86c4800000);
  BOOST_TEST(m.strides[3] == (uint64_t{1} << 40) - 16);
}

BOOST_AUTO_TEST_CASE(im2col_rank3_4_5_corners) {
  TensorMap m3 = decode_case("t0322", kRunA);
  BOOST_TEST((m3.mode == TensorMode::im2col));
  BOOST_TEST(m3.lower_corner[0] == -2);
  BOOST_TEST(m3.upper_corner[0] == -1);
  BOOST_TEST(m3.channels_per_pixel == 32u);
  BOOST_TEST(m3.pixels_per_column == 32u);
  decode_case("t0328", kRunA);

  TensorMap m4 = decode_case("t0372", 0x7f1d68800000);  // lower [1, -2], upper [-2, 1]
  BOOST_TEST(m4.lower_corner[0] == 1);
  BOOST_TEST(m4.lower_corner[1] == -2);
  BOOST_TEST(m4.upper_corner[0] == -2);
  BOOST_TEST(m4.upper_corner[1] == 1);

  TensorMap m5 = decode_case("t0422", 0x7f87fe800000);  // lower [-2, 1, -1], upper [0, 0, 1]
  BOOST_TEST((m5.lower_corner == std::array<int32_t, 3>{-2, 1, -1}));
  BOOST_TEST((m5.upper_corner == std::array<int32_t, 3>{0, 0, 1}));
  BOOST_TEST((m5.dtype == DataType::tf32));
  BOOST_TEST(m5.channels_per_pixel == 8u);
  BOOST_TEST(m5.pixels_per_column == 16u);
}

BOOST_AUTO_TEST_CASE(global_base_is_subtracted) {
  GoldenCase c = load("t0001");
  std::string error;
  BOOST_TEST(!decode_driver_descriptor(c.driver_descriptor.data(), kRunA + 0x1000, &error).has_value());
  BOOST_TEST(error.find("below global_base") != std::string::npos);
  auto m = decode_driver_descriptor(c.driver_descriptor.data(), 0, &error);
  BOOST_TEST_REQUIRE(m.has_value());
  BOOST_TEST(m->global_address == kRunA + 992);
}

// Every committed descriptor: decoded with the base its own address implies (the allocation
// base is unknown and differs between capture runs), the map must equal the YAML's, the base
// must look like a cudaMalloc address (2 MiB aligned), and re-encoding must give the same bytes.
namespace {
void check_folder(const std::string& dir, int expected_min) {
  int checked = 0, mismatches = 0;
  for (const std::string& path : find_golden_cases({dir})) {
    GoldenCase c = load_golden_case(path);
    if (c.driver_descriptor.empty()) continue;
    ++checked;
    std::ostringstream why;
    const uint64_t base = address_field(c.driver_descriptor) - c.map.global_address;
    std::string error;
    auto m = decode_driver_descriptor(c.driver_descriptor.data(), base, &error);
    if (base % (2u << 20) != 0) why << "implied base not 2 MiB aligned; ";
    if (!m) {
      why << "refused: " << error;
    } else {
      if (*m != canonical_form(c.map)) why << "decoded map differs from the YAML; ";
      try {
        Bytes again = encode_driver_descriptor(*m, base);
        if (std::vector<uint8_t>(again.begin(), again.end()) != c.driver_descriptor) why << "re-encoding differs; ";
      } catch (const std::invalid_argument& e) {
        why << "re-encoding threw: " << e.what();
      }
    }
    if (!why.str().empty()) {
      ++mismatches;
      BOOST_TEST_MESSAGE(c.name << ": " << why.str());
    }
  }
  BOOST_TEST_MESSAGE(dir << ": " << checked << " descriptors, " << mismatches << " mismatches");
  BOOST_TEST(checked >= expected_min);
  BOOST_TEST(mismatches == 0);
}
}  // namespace

BOOST_AUTO_TEST_CASE(every_silicon_descriptor) { check_folder(golden_dir("silicon"), 600); }

BOOST_AUTO_TEST_CASE(every_holdout_descriptor) { check_folder(golden_dir("silicon_holdout"), 300); }

BOOST_AUTO_TEST_CASE(encode_refuses_what_sm90_cannot_hold) {
  TensorMap m = decode_case("t0003", kRunA);
  auto refused = [](TensorMap x) {
    try {
      encode_driver_descriptor(x, 0);
    } catch (const std::invalid_argument&) {
      return true;
    }
    return false;
  };
  TensorMap x = m;
  x.mode = TensorMode::gather4;
  BOOST_TEST(refused(x));
  x = m;
  x.dtype = DataType::b4x16;
  BOOST_TEST(refused(x));
  x = m;
  x.swizzle = SwizzleMode::b128;
  x.swizzle_atom = SwizzleAtom::b32;
  BOOST_TEST(refused(x));
  x = m;
  x.strides[1] = 632;  // not a multiple of 16
  BOOST_TEST(refused(x));
  x = m;
  x.strides[0] = uint64_t{1} << 40;
  BOOST_TEST(refused(x));
  x = m;
  x.box[2] = 257;
  BOOST_TEST(refused(x));
  TensorMap i5 = decode_case("t0422", 0x7f87fe800000);
  x = i5;
  x.lower_corner[1] = -17;  // 5 bits in rank 5
  BOOST_TEST(refused(x));
  x = i5;
  x.lower_corner[1] = -16;
  BOOST_TEST(!refused(x));
}

// Arbitrary bytes, and single-bit flips of real descriptors, never crash the decoder; whatever
// it accepts re-encodes to a map that decodes to the same map.
BOOST_AUTO_TEST_CASE(arbitrary_bytes_are_safe) {
  std::mt19937_64 rng(12345);
  std::vector<Bytes> seeds;
  for (const char* name : {"t0001", "t0003", "t0022", "t0322", "t0372", "t0477"}) {
    GoldenCase c = load(name);
    Bytes b{};
    std::copy(c.driver_descriptor.begin(), c.driver_descriptor.end(), b.begin());
    seeds.push_back(b);
  }
  int accepted = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    Bytes b{};
    if (iter % 4 == 0) {
      for (auto& x : b) x = static_cast<uint8_t>(rng());
    } else {
      b = seeds[rng() % seeds.size()];
      int flips = 1 + static_cast<int>(rng() % 3);
      for (int f = 0; f < flips; ++f) {
        unsigned bit = static_cast<unsigned>(rng() % (8 * kDriverDescriptorBytes));
        b[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
      }
    }
    uint64_t base = (iter % 2) ? 0 : (rng() & 0x0000'7fff'ffe0'0000ull);
    std::string error;
    auto m = decode_driver_descriptor(b.data(), base, &error);
    if (!m) {
      BOOST_TEST(!error.empty());
      continue;
    }
    ++accepted;
    try {
      Bytes again = encode_driver_descriptor(*m, base);
      auto m2 = decode_driver_descriptor(again.data(), base, &error);
      BOOST_TEST((m2 && *m2 == *m));
    } catch (const std::invalid_argument& e) {
      // Only a box too large for the 32-bit box-bytes word may fail to re-encode.
      BOOST_TEST(std::string(e.what()).find("box of") != std::string::npos, e.what());
    }
  }
  BOOST_TEST(accepted > 0);
  BOOST_TEST(!decode_driver_descriptor(nullptr, 0).has_value());
}
