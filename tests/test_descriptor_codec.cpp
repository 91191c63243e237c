// The 128-byte descriptor encoding: round trips, field boundaries, the documented byte layout,
// and decoding of corrupted bytes.
#define BOOST_TEST_MODULE descriptor_codec
#include <boost/test/unit_test.hpp>

#include <random>
#include <stdexcept>

#include "tma/descriptor/descriptor_codec.h"
#include "tma/descriptor/descriptor_validation.h"

using namespace tma;

namespace {

using Bytes = std::array<uint8_t, kDescriptorBytes>;

TensorMap tiled_map() {
  TensorMap m;
  m.mode = TensorMode::tiled;
  m.dtype = DataType::bf16;
  m.rank = 3;
  m.global_address = 0x0000'1234'5678'9A00;
  m.dims = {34, 8, 3, 0, 0};
  m.strides = {160, 1328, 0, 0};
  m.box = {48, 2, 3, 0, 0};
  m.element_strides = {1, 3, 3, 1, 1};
  m.swizzle = SwizzleMode::b128;
  m.l2_promotion = L2Promotion::b128;
  return m;
}

TensorMap im2col_map() {
  TensorMap m;
  m.mode = TensorMode::im2col;
  m.dtype = DataType::f16;
  m.rank = 5;
  m.global_address = 0x40000;
  m.dims = {64, 8, 8, 8, 2};
  m.strides = {128, 1024, 8192, 65536};
  m.lower_corner = {-1, -2, -3};
  m.upper_corner = {1, 2, 3};
  m.channels_per_pixel = 64;
  m.pixels_per_column = 128;
  m.swizzle = SwizzleMode::b128;
  return m;
}

std::optional<TensorMap> round_trip(const TensorMap& m) {
  Bytes b = encode_descriptor(m);
  std::string error;
  auto decoded = decode_descriptor(b.data(), &error);
  BOOST_TEST(decoded.has_value(), "decode failed: " << error);
  return decoded;
}

#define EXPECT_ROUND_TRIP(map)                                              \
  do {                                                                      \
    auto decoded_ = round_trip(map);                                        \
    BOOST_TEST((decoded_ && *decoded_ == canonical_form(map)), "round trip changed the map"); \
  } while (0)

uint64_t get_le(const Bytes& b, size_t off, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t{b[off + i]} << (8 * i);
  return v;
}

std::string decode_error(const Bytes& b) {
  std::string error;
  auto m = decode_descriptor(b.data(), &error);
  BOOST_TEST(!m.has_value(), "decode accepted corrupted bytes");
  BOOST_TEST(!error.empty());
  return error;
}

// Random maps the driver would accept: random fields within (roughly) their rules, kept only
// when validate_tensor_map agrees. Unused fields stay at their defaults, so the round trip is exact.
class ValidMapGenerator {
 public:
  explicit ValidMapGenerator(uint64_t seed) : rng_(seed) {}

  TensorMap next() {
    for (;;) {
      TensorMap m = candidate();
      if (!validate_tensor_map(m, GpuArch::sm100)) return m;
    }
  }

 private:
  uint64_t uniform(uint64_t lo, uint64_t hi) { return std::uniform_int_distribution<uint64_t>(lo, hi)(rng_); }
  int64_t uniform_signed(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  bool chance(int percent) { return uniform(0, 99) < static_cast<uint64_t>(percent); }
  // Mostly small values, sometimes the extremes of the range.
  uint64_t pick(uint64_t lo, uint64_t hi) {
    if (chance(10)) return lo;
    if (chance(10)) return hi;
    return uniform(lo, hi);
  }

  TensorMap candidate() {
    TensorMap m;
    m.mode = static_cast<TensorMode>(uniform(0, 4));
    m.dtype = static_cast<DataType>(uniform(0, kNumDataTypes - 1));
    bool boxed = m.mode == TensorMode::tiled || m.mode == TensorMode::gather4;
    m.rank = m.mode == TensorMode::gather4 ? 2 : boxed ? static_cast<int>(uniform(1, 5)) : static_cast<int>(uniform(3, 5));
    m.global_address = pick(0, ~uint64_t{0}) & ~uint64_t{31};
    m.interleave = chance(80) ? Interleave::none : static_cast<Interleave>(uniform(1, 2));
    static const char* kSwizzles[] = {"none", "32B", "64B", "96B", "128B", "128B_atom_32B",
                                      "128B_atom_32B_flip_8B", "128B_atom_64B"};
    parse_swizzle_name(kSwizzles[uniform(0, 7)], m.swizzle, m.swizzle_atom);
    m.l2_promotion = static_cast<L2Promotion>(uniform(0, 3));
    m.oob_fill = chance(30) ? OobFill::nan : OobFill::zero;

    bool packed16 = m.dtype == DataType::b4x16_p64 || m.dtype == DataType::b6x16_p32;
    for (int i = 0; i < m.rank; ++i) {
      m.dims[i] = pick(1, uint64_t{1} << 32);
      m.element_strides[i] = static_cast<uint32_t>(pick(1, 8));
    }
    if (packed16) m.dims[0] = 128 * pick(1, (uint64_t{1} << 32) / 128);
    if (m.dtype == DataType::b4x16) m.dims[0] = 2 * pick(1, uint64_t{1} << 31);
    for (int i = 0; i + 1 < m.rank; ++i) m.strides[i] = 32 * pick(0, ((uint64_t{1} << 40) - 1) / 32);

    if (boxed) {
      // box0 a whole number of 16-byte granules (128 for the padded packed types).
      uint64_t granule = 16 * elements_per_unit(m.dtype) / element_bytes(m.dtype);
      if (granule == 0) granule = 1;
      m.box[0] = packed16 ? 128 : static_cast<uint32_t>(granule * pick(1, std::max<uint64_t>(1, 256 / granule)));
      for (int i = 1; i < m.rank; ++i) m.box[i] = static_cast<uint32_t>(pick(1, 256));
      if (m.mode == TensorMode::gather4) m.box[1] = 1;
    } else {
      int corners = m.mode == TensorMode::im2col ? m.rank - 2 : 1;
      int32_t limit = m.mode != TensorMode::im2col || m.rank == 3 ? 32768 : m.rank == 4 ? 128 : 16;
      for (int i = 0; i < corners; ++i) {
        m.lower_corner[i] = static_cast<int32_t>(uniform_signed(-limit, limit - 1));
        m.upper_corner[i] = static_cast<int32_t>(uniform_signed(-limit, limit - 1));
      }
      m.channels_per_pixel = packed16 ? 128 : static_cast<uint32_t>(pick(1, 256));
      m.pixels_per_column = static_cast<uint32_t>(pick(1, 1024));
    }
    return m;
  }

  std::mt19937_64 rng_;
};

}  // namespace

BOOST_AUTO_TEST_CASE(round_trip_examples) {
  EXPECT_ROUND_TRIP(tiled_map());
  EXPECT_ROUND_TRIP(im2col_map());
  Bytes b = encode_descriptor(tiled_map());
  BOOST_TEST(decode_descriptor(b.data()).has_value());  // error pointer is optional
}

BOOST_AUTO_TEST_CASE(round_trip_random_valid_maps) {
  ValidMapGenerator gen(20240611);
  int per_mode[5] = {};
  for (int n = 0; n < 5000; ++n) {
    TensorMap m = gen.next();
    ++per_mode[static_cast<int>(m.mode)];
    Bytes b = encode_descriptor(m);
    std::string error;
    auto decoded = decode_descriptor(b.data(), &error);
    BOOST_TEST_REQUIRE(decoded.has_value(), "map " << n << ": " << error);
    BOOST_TEST_REQUIRE((*decoded == m), "map " << n << " changed in the round trip");
    BOOST_TEST_REQUIRE((encode_descriptor(*decoded) == b));
  }
  for (int count : per_mode) BOOST_TEST(count > 100);  // every mode was exercised
}

BOOST_AUTO_TEST_CASE(layout_matches_the_document) {
  TensorMap m = tiled_map();
  m.oob_fill = OobFill::nan;
  m.swizzle_atom = SwizzleAtom::b32;
  m.interleave = Interleave::b16;
  Bytes b = encode_descriptor(m);
  BOOST_TEST(b[0] == 0x54);
  BOOST_TEST(b[1] == 1);
  BOOST_TEST(b[2] == static_cast<int>(TensorMode::tiled));
  BOOST_TEST(b[3] == static_cast<int>(DataType::bf16));
  BOOST_TEST(b[4] == 3);
  BOOST_TEST(b[5] == (1 | (2 << 2) | (1 << 4)));  // interleave 16B, L2 128B, NaN fill
  BOOST_TEST(b[6] == (4 | (1 << 3)));             // 128B, atomicity 32B
  BOOST_TEST(get_le(b, 8, 8) == m.global_address);
  BOOST_TEST(get_le(b, 16, 4) == 33u);
  BOOST_TEST(get_le(b, 20, 4) == 7u);
  BOOST_TEST(get_le(b, 24, 4) == 2u);
  BOOST_TEST(get_le(b, 28, 8) == 0u);  // dims 3, 4 unused
  BOOST_TEST(get_le(b, 36, 5) == 160u);
  BOOST_TEST(get_le(b, 41, 5) == 1328u);
  BOOST_TEST(get_le(b, 46, 5) == 0u);
  BOOST_TEST(b[56] == 47);
  BOOST_TEST(b[57] == 1);
  BOOST_TEST(b[58] == 2);
  BOOST_TEST(get_le(b, 62, 2) == (0u | (2u << 3) | (2u << 6)));
  for (size_t i = 64; i < kDescriptorBytes; ++i) BOOST_TEST(b[i] == 0, "byte " << i);

  Bytes c = encode_descriptor(im2col_map());
  BOOST_TEST(get_le(c, 64, 4) == uint32_t(-1));
  BOOST_TEST(get_le(c, 68, 4) == 1u);
  BOOST_TEST(get_le(c, 72, 2) == uint16_t(-2));
  BOOST_TEST(get_le(c, 74, 2) == 2u);
  BOOST_TEST(get_le(c, 76, 2) == uint16_t(-3));
  BOOST_TEST(get_le(c, 78, 2) == 3u);
  BOOST_TEST(get_le(c, 80, 4) == 64u);
  BOOST_TEST(get_le(c, 84, 4) == 128u);
  for (size_t i = 88; i < kDescriptorBytes; ++i) BOOST_TEST(c[i] == 0, "byte " << i);
  for (size_t i = 56; i < 61; ++i) BOOST_TEST(c[i] == 0, "box byte " << i);
}

// ---- each field at its boundaries ----

BOOST_AUTO_TEST_CASE(boundary_address) {
  for (uint64_t a : {uint64_t{0}, ~uint64_t{0}, uint64_t{1} << 63}) {
    TensorMap m = tiled_map();
    m.global_address = a;  // the codec stores any address; alignment is validation's job
    EXPECT_ROUND_TRIP(m);
  }
}

BOOST_AUTO_TEST_CASE(boundary_rank_dims_strides) {
  for (int rank = 1; rank <= 5; ++rank) {
    TensorMap m;
    m.rank = rank;
    for (int i = 0; i < rank; ++i) {
      m.dims[i] = i % 2 ? 1 : uint64_t{1} << 32;
      m.box[i] = i % 2 ? 1 : 256;
      m.element_strides[i] = i % 2 ? 1 : 8;
    }
    for (int i = 0; i + 1 < rank; ++i) m.strides[i] = i % 2 ? 0 : (uint64_t{1} << 40) - 1;
    EXPECT_ROUND_TRIP(m);
  }
  TensorMap m = tiled_map();
  m.dims[0] = 0;
  BOOST_CHECK_THROW(encode_descriptor(m), std::invalid_argument);
  m.dims[0] = (uint64_t{1} << 32) + 1;
  BOOST_CHECK_THROW(encode_descriptor(m), std::invalid_argument);
  m = tiled_map();
  m.strides[1] = uint64_t{1} << 40;
  BOOST_CHECK_THROW(encode_descriptor(m), std::invalid_argument);
  m = tiled_map();
  m.rank = 0;
  BOOST_CHECK_THROW(encode_descriptor(m), std::invalid_argument);
  m.rank = 6;
  BOOST_CHECK_THROW(encode_descriptor(m), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(boundary_box_and_element_strides) {
  TensorMap m = tiled_map();
  m.box[1] = 0;
  BOOST_CHECK_THROW(encode_descriptor(m), std::invalid_argument);
  m.box[1] = 257;
  BOOST_CHECK_THROW(encode_descriptor(m), std::invalid_argument);
  m = tiled_map();
  m.element_strides[2] = 0;
  BOOST_CHECK_THROW(encode_descriptor(m), std::invalid_argument);
  m.element_strides[2] = 9;
  BOOST_CHECK_THROW(encode_descriptor(m), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(boundary_enums) {
  for (int mode = 0; mode <= 4; ++mode)
    for (int t = 0; t < kNumDataTypes; ++t) {
      TensorMap m = mode <= 0 || mode == 4 ? tiled_map() : im2col_map();
      m.mode = static_cast<TensorMode>(mode);
      m.dtype = static_cast<DataType>(t);
      EXPECT_ROUND_TRIP(m);
    }
  for (int i = 0; i <= 2; ++i)
    for (int p = 0; p <= 3; ++p)
      for (int f = 0; f <= 1; ++f)
        for (int s = 0; s <= 4; ++s)
          for (int a = 0; a <= 3; ++a) {
            TensorMap m = tiled_map();
            m.interleave = static_cast<Interleave>(i);
            m.l2_promotion = static_cast<L2Promotion>(p);
            m.oob_fill = static_cast<OobFill>(f);
            m.swizzle = static_cast<SwizzleMode>(s);
            m.swizzle_atom = static_cast<SwizzleAtom>(a);
            EXPECT_ROUND_TRIP(m);
          }
  TensorMap m = tiled_map();
  m.swizzle = static_cast<SwizzleMode>(5);
  BOOST_CHECK_THROW(encode_descriptor(m), std::invalid_argument);
  m = tiled_map();
  m.dtype = static_cast<DataType>(16);
  BOOST_CHECK_THROW(encode_descriptor(m), std::invalid_argument);
  m = tiled_map();
  m.mode = static_cast<TensorMode>(5);
  BOOST_CHECK_THROW(encode_descriptor(m), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(boundary_im2col_fields) {
  TensorMap m = im2col_map();
  m.lower_corner = {INT32_MIN, INT16_MIN, INT16_MAX};
  m.upper_corner = {INT32_MAX, INT16_MAX, INT16_MIN};
  m.channels_per_pixel = 0;
  m.pixels_per_column = UINT32_MAX;
  EXPECT_ROUND_TRIP(m);
  m.channels_per_pixel = UINT32_MAX;
  m.pixels_per_column = 0;
  EXPECT_ROUND_TRIP(m);
  m.lower_corner[1] = INT16_MAX + 1;
  BOOST_CHECK_THROW(encode_descriptor(m), std::invalid_argument);
  m = im2col_map();
  m.upper_corner[2] = INT16_MIN - 1;
  BOOST_CHECK_THROW(encode_descriptor(m), std::invalid_argument);
  // im2col_w128 ignores pixels_per_column: validation accepts any value, so the codec must carry it.
  m = im2col_map();
  m.mode = TensorMode::im2col_w128;
  m.lower_corner = {0, 0, 0};
  m.upper_corner = {0, 0, 0};
  m.pixels_per_column = 100000;
  BOOST_TEST(!validate_tensor_map(m, GpuArch::sm100).has_value());
  EXPECT_ROUND_TRIP(m);

  for (TensorMode mode : {TensorMode::im2col_w, TensorMode::im2col_w128}) {
    TensorMap w = im2col_map();
    w.mode = mode;
    w.lower_corner = {INT32_MIN, 0, 0};
    w.upper_corner = {INT32_MAX, 0, 0};
    EXPECT_ROUND_TRIP(w);
  }
}

BOOST_AUTO_TEST_CASE(unused_fields_are_dropped) {
  TensorMap m = tiled_map();
  m.dims[4] = 77;
  m.strides[3] = 99;
  m.box[3] = 5;
  m.element_strides[4] = 0;  // past rank: not even range checked
  m.lower_corner = {1, 2, 3};
  m.channels_per_pixel = 8;
  auto d = round_trip(m);
  BOOST_TEST((d && *d == tiled_map()));
  BOOST_TEST((canonical_form(m) == tiled_map()));

  TensorMap w = im2col_map();
  w.mode = TensorMode::im2col_w;  // carries the W corner only, and no box
  w.box = {9, 9, 9, 9, 9};
  d = round_trip(w);
  BOOST_TEST_REQUIRE(d.has_value());
  BOOST_TEST(d->lower_corner[0] == -1);
  BOOST_TEST(d->lower_corner[1] == 0);
  BOOST_TEST(d->upper_corner[2] == 0);
  BOOST_TEST(d->box[0] == 0u);
}

// ---- decoding corrupted bytes ----

BOOST_AUTO_TEST_CASE(decode_refuses_corruption) {
  const Bytes good = encode_descriptor(tiled_map());
  const Bytes good_im2col = encode_descriptor(im2col_map());
  auto corrupt = [](Bytes b, size_t offset, uint8_t value) {
    b[offset] = value;
    return b;
  };
  BOOST_TEST(decode_error(corrupt(good, 0, 0x55)).find("magic") != std::string::npos);
  BOOST_TEST(decode_error(corrupt(good, 1, 2)).find("version") != std::string::npos);
  BOOST_TEST(decode_error(corrupt(good, 2, 5)).find("mode") != std::string::npos);
  BOOST_TEST(decode_error(corrupt(good, 3, 16)).find("dtype") != std::string::npos);
  BOOST_TEST(decode_error(corrupt(good, 4, 0)).find("rank") != std::string::npos);
  BOOST_TEST(decode_error(corrupt(good, 4, 6)).find("rank") != std::string::npos);
  BOOST_TEST(decode_error(corrupt(good, 5, 3)).find("interleave") != std::string::npos);
  BOOST_TEST(decode_error(corrupt(good, 5, good[5] | 0x20)).find("reserved") != std::string::npos);
  BOOST_TEST(decode_error(corrupt(good, 6, 5)).find("swizzle") != std::string::npos);
  BOOST_TEST(decode_error(corrupt(good, 6, good[6] | 0x80)).find("reserved") != std::string::npos);
  decode_error(corrupt(good, 7, 1));
  decode_error(corrupt(good, 61, 1));
  decode_error(corrupt(good, 127, 1));
  decode_error(corrupt(good, 28, 1));    // globalDim[3] of a 3D map
  decode_error(corrupt(good, 46, 1));    // globalStrides[2] of a 3D map
  decode_error(corrupt(good, 59, 1));    // boxDim[3] of a 3D map
  decode_error(corrupt(good, 63, 0x04)); // elementStrides[3] bits of a 3D map
  decode_error(corrupt(good, 63, 0x80)); // reserved bit 15
  decode_error(corrupt(good, 64, 1));    // W corner of a tiled map
  decode_error(corrupt(good, 80, 1));    // channels of a tiled map
  decode_error(corrupt(good_im2col, 56, 1));  // box of an im2col map

  BOOST_TEST(!decode_descriptor(nullptr).has_value());
  Bytes zeros{};
  decode_error(zeros);
}

// Any 128 bytes: decode either refuses or returns the one map whose encoding is those bytes.
BOOST_AUTO_TEST_CASE(decode_random_and_mutated_bytes) {
  std::mt19937_64 rng(7);
  ValidMapGenerator gen(99);
  int accepted_mutations = 0;
  for (int n = 0; n < 20000; ++n) {
    Bytes b;
    if (n % 2 == 0) {
      for (auto& byte : b) byte = static_cast<uint8_t>(rng());
      if (n % 4 == 0) {
        b[0] = kDescriptorMagic;
        b[1] = kDescriptorVersion;
      }
    } else {
      b = encode_descriptor(gen.next());
      size_t bit = rng() % (kDescriptorBytes * 8);
      b[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    }
    auto m = decode_descriptor(b.data());
    if (!m) continue;
    if (n % 2 == 1) ++accepted_mutations;
    BOOST_TEST_REQUIRE((encode_descriptor(*m) == b), "bytes " << n << " do not re-encode to themselves");
  }
  BOOST_TEST(accepted_mutations > 1000);  // flips inside used fields decode to other maps
}
