#include "tma/descriptor/element_ops.h"

#include <cmath>
#include <cstring>

namespace tma {

namespace {

template <typename T>
T load_le(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T>
void store_le(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

float bits_to_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
uint32_t float_to_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

bool is_nan_half(uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x03FF); }
bool is_nan_bf16(uint16_t b) { return (b & 0x7F80) == 0x7F80 && (b & 0x007F); }

bool is_f32_family(DataType t) {
  return t == DataType::f32 || t == DataType::f32_ftz || t == DataType::tf32 || t == DataType::tf32_ftz;
}

}  // namespace

uint32_t tf32_round(uint32_t f) {
  if ((f & 0x7F800000u) == 0x7F800000u && (f & 0x007FFFFFu)) return 0x7FFFE000u;  // any NaN
  // Round to nearest even at bit 13; a carry into the exponent is the correct overflow to inf.
  const uint32_t lsb = (f >> 13) & 1u;
  return (f + 0x0FFFu + lsb) & 0xFFFFE000u;
}

void load_convert(DataType t, const uint8_t* src, uint8_t* dst) {
  if (t == DataType::tf32 || t == DataType::tf32_ftz) {
    store_le<uint32_t>(dst, tf32_round(load_le<uint32_t>(src)));
    return;
  }
  std::memcpy(dst, src, element_bytes(t));
}

void oob_fill_element(DataType t, OobFill fill, uint8_t* dst) {
  const uint32_t n = smem_unit_bytes(t);
  if (fill == OobFill::nan && is_float(t)) {
    for (uint32_t i = 0; i + 1 < n; i += 2) store_le<uint16_t>(dst + i, 0x7FF7);
  } else {
    std::memset(dst, 0, n);
  }
}

void pack_b6p2x16(const uint8_t* smem16, uint8_t* global12) {
  std::memset(global12, 0, 12);
  for (int i = 0; i < 16; ++i)
    for (int b = 0; b < 6; ++b)
      if ((smem16[i] >> b) & 1) global12[(6 * i + b) / 8] |= static_cast<uint8_t>(1u << ((6 * i + b) % 8));
}

// ---- IEEE half / bfloat16 ----

float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1F;
  uint32_t man = h & 0x3FF;
  if (exp == 0x1F) return bits_to_float(sign | 0x7F800000u | (man << 13));
  if (exp == 0) {
    if (man == 0) return bits_to_float(sign);
    // subnormal: value = man * 2^-24, exact in float
    float v = std::ldexp(static_cast<float>(man), -24);
    return sign ? -v : v;
  }
  return bits_to_float(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t float_to_half_rne(float f) {
  const uint32_t x = float_to_bits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t exp = (x >> 23) & 0xFF;
  uint32_t man = x & 0x7FFFFF;
  if (exp == 0xFF) return static_cast<uint16_t>(sign | 0x7C00u | (man ? 0x200u | (man >> 13) : 0));
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 0x1F) return static_cast<uint16_t>(sign | 0x7C00u);  // overflow to inf
  if (e <= 0) {
    // subnormal half (or zero): shift the full significand, round to nearest even
    if (e < -10) return sign;
    man |= 0x800000u;
    const int shift = 14 - e;  // 13 + (1 - e)
    uint32_t half_man = man >> shift;
    const uint32_t rem = man & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_man & 1))) ++half_man;
    return static_cast<uint16_t>(sign | half_man);
  }
  uint32_t h = (static_cast<uint32_t>(e) << 10) | (man >> 13);
  const uint32_t rem = man & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;  // may carry into the exponent: correct
  return static_cast<uint16_t>(sign | h);
}

float bf16_to_float(uint16_t b) { return bits_to_float(static_cast<uint32_t>(b) << 16); }

uint16_t float_to_bf16_rne(float f) {
  const uint32_t x = float_to_bits(f);
  if ((x & 0x7F800000u) == 0x7F800000u && (x & 0x7FFFFF)) return static_cast<uint16_t>((x >> 16) | 0x40);
  const uint32_t lsb = (x >> 16) & 1u;
  return static_cast<uint16_t>((x + 0x7FFFu + lsb) >> 16);
}

// ---- reductions ----

bool reduce_supported(DataType t, ReduceOp op) {
  switch (op) {
    case ReduceOp::add:  // f64 and the f32 variants add too on sm_90 (golden t0716, t0718, t0719)
      return t == DataType::u32 || t == DataType::s32 || t == DataType::u64 || is_f32_family(t) ||
             t == DataType::f64 || t == DataType::f16 || t == DataType::bf16;
    case ReduceOp::min:
    case ReduceOp::max:
      return t == DataType::u32 || t == DataType::s32 || t == DataType::u64 || t == DataType::s64 ||
             t == DataType::f16 || t == DataType::bf16;
    case ReduceOp::inc:
    case ReduceOp::dec: return t == DataType::u32;
    case ReduceOp::and_:
    case ReduceOp::or_:
    case ReduceOp::xor_: return t == DataType::u32 || t == DataType::s32 || t == DataType::u64;
  }
  return false;
}

namespace {

template <typename T>
T int_reduce(ReduceOp op, T g, T s) {
  switch (op) {
    case ReduceOp::add: return static_cast<T>(g + s);
    case ReduceOp::min: return s < g ? s : g;
    case ReduceOp::max: return s > g ? s : g;
    case ReduceOp::and_: return g & s;
    case ReduceOp::or_: return g | s;
    case ReduceOp::xor_: return g ^ s;
    case ReduceOp::inc: return g >= s ? T(0) : static_cast<T>(g + 1);
    case ReduceOp::dec: return (g == 0 || g > s) ? s : static_cast<T>(g - 1);
  }
  return g;
}

// f16/bf16: add in f32 (rounded), then round to the 16-bit type; a NaN result is 0x7FFF.
// min/max return the other operand when one is NaN.
template <typename ToFloat, typename FromFloat, typename IsNan>
uint16_t half_reduce(ReduceOp op, uint16_t g, uint16_t s, ToFloat to_f, FromFloat from_f, IsNan is_nan) {
  if (op == ReduceOp::add) {
    const float r = to_f(g) + to_f(s);
    if (std::isnan(r)) return 0x7FFF;
    return from_f(r);
  }
  if (is_nan(g) && is_nan(s)) return 0x7FFF;
  if (is_nan(g)) return s;
  if (is_nan(s)) return g;
  const float fg = to_f(g), fs = to_f(s);
  if (fg == fs) {  // +0 / -0: min prefers the negative zero, max the positive one
    const bool g_neg = g & 0x8000;
    if (op == ReduceOp::min) return g_neg ? g : s;
    return g_neg ? s : g;
  }
  if (op == ReduceOp::min) return fs < fg ? s : g;
  return fs > fg ? s : g;
}

}  // namespace

void reduce_element(DataType t, ReduceOp op, const uint8_t* src, uint8_t* dst) {
  switch (t) {
    case DataType::u32:
      store_le<uint32_t>(dst, int_reduce<uint32_t>(op, load_le<uint32_t>(dst), load_le<uint32_t>(src)));
      return;
    case DataType::s32:
      if (op == ReduceOp::add) {  // two's-complement wrap, computed unsigned to stay defined
        store_le<uint32_t>(dst, load_le<uint32_t>(dst) + load_le<uint32_t>(src));
        return;
      }
      store_le<int32_t>(dst, int_reduce<int32_t>(op, load_le<int32_t>(dst), load_le<int32_t>(src)));
      return;
    case DataType::u64:
      store_le<uint64_t>(dst, int_reduce<uint64_t>(op, load_le<uint64_t>(dst), load_le<uint64_t>(src)));
      return;
    case DataType::s64:
      store_le<int64_t>(dst, int_reduce<int64_t>(op, load_le<int64_t>(dst), load_le<int64_t>(src)));
      return;
    case DataType::f16:
      store_le<uint16_t>(dst, half_reduce(op, load_le<uint16_t>(dst), load_le<uint16_t>(src), half_to_float,
                                          float_to_half_rne, is_nan_half));
      return;
    case DataType::bf16:
      store_le<uint16_t>(dst, half_reduce(op, load_le<uint16_t>(dst), load_le<uint16_t>(src), bf16_to_float,
                                          float_to_bf16_rne, is_nan_bf16));
      return;
    case DataType::f64:
      if (op == ReduceOp::add) {
        double a, b;
        std::memcpy(&a, dst, 8);
        std::memcpy(&b, src, 8);
        const double r = a + b;
        if (std::isnan(r)) store_le<uint64_t>(dst, 0x7FFFFFFFFFFFFFFFull);
        else std::memcpy(dst, &r, 8);
      }
      return;
    default:
      if (is_f32_family(t) && op == ReduceOp::add) {
        // The _ftz types add with .ftz: subnormal operands and results become zeros of their
        // sign (an H100 capture, tests/golden/silicon_h100/h0405: a subnormal in shared memory
        // left the global value unchanged). Plain f32 keeps subnormals.
        const bool ftz = t == DataType::f32_ftz || t == DataType::tf32_ftz;
        auto flush = [ftz](uint32_t x) { return ftz && !(x & 0x7F800000u) ? x & 0x80000000u : x; };
        const float r = bits_to_float(flush(load_le<uint32_t>(dst))) + bits_to_float(flush(load_le<uint32_t>(src)));
        store_le<uint32_t>(dst, std::isnan(r) ? 0x7FFFFFFFu : flush(float_to_bits(r)));
      }
      return;
  }
}

}  // namespace tma
