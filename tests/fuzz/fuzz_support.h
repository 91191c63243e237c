// Shared by the libFuzzer harnesses (tests/fuzz/fuzz_*.cpp), their replay driver and the seed
// maker: a fixed little-endian layout of TensorMap and TmaOp as raw bytes, a reader that reads
// zeros past the end of the input (so every input, of any length, is a map), and a private
// temporary folder for the harnesses that load files.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tma/descriptor/tensor_map.h"
#include "tma/descriptor/tma_op.h"

namespace tma::fuzz {

// An unexpected result: print it and abort, which libFuzzer (and the ctest replay) reports as a crash.
[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz harness: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint64_t uint(size_t nbytes) {
    uint64_t v = 0;
    for (size_t i = 0; i < nbytes; ++i, ++pos_)
      if (pos_ < size_) v |= uint64_t{data_[pos_]} << (8 * i);
    return v;
  }
  uint8_t u8() { return static_cast<uint8_t>(uint(1)); }
  uint16_t u16() { return static_cast<uint16_t>(uint(2)); }
  uint32_t u32() { return static_cast<uint32_t>(uint(4)); }
  uint64_t u64() { return uint(8); }
  int32_t i32() { return static_cast<int32_t>(u32()); }
  size_t pos() const { return pos_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

class Writer {
 public:
  void uint(uint64_t v, size_t nbytes) {
    for (size_t i = 0; i < nbytes; ++i) bytes.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<uint8_t> bytes;
};

// Enums are read as any byte: validation must refuse the values no enumerator has.
inline TensorMap read_map(Reader& r) {
  TensorMap m;
  m.mode = static_cast<TensorMode>(r.u8());
  m.dtype = static_cast<DataType>(r.u8());
  m.rank = static_cast<int8_t>(r.u8());  // negative ranks too
  m.global_address = r.u64();
  for (auto& d : m.dims) d = r.u64();
  for (auto& s : m.strides) s = r.u64();
  for (auto& b : m.box) b = r.u32();
  for (auto& e : m.element_strides) e = r.u32();
  m.interleave = static_cast<Interleave>(r.u8());
  m.swizzle = static_cast<SwizzleMode>(r.u8());
  m.swizzle_atom = static_cast<SwizzleAtom>(r.u8());
  m.l2_promotion = static_cast<L2Promotion>(r.u8());
  m.oob_fill = static_cast<OobFill>(r.u8());
  for (auto& c : m.lower_corner) c = r.i32();
  for (auto& c : m.upper_corner) c = r.i32();
  m.channels_per_pixel = r.u32();
  m.pixels_per_column = r.u32();
  return m;
}

inline void write_map(Writer& w, const TensorMap& m) {
  w.uint(static_cast<uint8_t>(m.mode), 1);
  w.uint(static_cast<uint8_t>(m.dtype), 1);
  w.uint(static_cast<uint8_t>(m.rank), 1);
  w.uint(m.global_address, 8);
  for (auto d : m.dims) w.uint(d, 8);
  for (auto s : m.strides) w.uint(s, 8);
  for (auto b : m.box) w.uint(b, 4);
  for (auto e : m.element_strides) w.uint(e, 4);
  w.uint(static_cast<uint8_t>(m.interleave), 1);
  w.uint(static_cast<uint8_t>(m.swizzle), 1);
  w.uint(static_cast<uint8_t>(m.swizzle_atom), 1);
  w.uint(static_cast<uint8_t>(m.l2_promotion), 1);
  w.uint(static_cast<uint8_t>(m.oob_fill), 1);
  for (auto c : m.lower_corner) w.uint(static_cast<uint32_t>(c), 4);
  for (auto c : m.upper_corner) w.uint(static_cast<uint32_t>(c), 4);
  w.uint(m.channels_per_pixel, 4);
  w.uint(m.pixels_per_column, 4);
}

// Operation kinds and reduce ops are taken modulo their count (the engine's switch covers them all).
inline TmaOp read_op(Reader& r) {
  TmaOp op;
  op.kind = static_cast<OpKind>(r.u8() % 4);
  op.reduce = static_cast<ReduceOp>(r.u8() % 8);
  for (auto& c : op.coords) c = r.i32();
  for (auto& o : op.im2col_offsets) o = r.u16();
  op.w_halo = r.u16();
  op.w_offset = r.u16();
  op.smem_addr = r.u32();
  return op;
}

inline void write_op(Writer& w, const TmaOp& op) {
  w.uint(static_cast<uint8_t>(op.kind), 1);
  w.uint(static_cast<uint8_t>(op.reduce), 1);
  for (auto c : op.coords) w.uint(static_cast<uint32_t>(c), 4);
  for (auto o : op.im2col_offsets) w.uint(o, 2);
  w.uint(op.w_halo, 2);
  w.uint(op.w_offset, 2);
  w.uint(op.smem_addr, 4);
}

// The reference-engine harness's input: map, operation, then the run's setting.
struct EngineInput {
  TensorMap map;
  TmaOp op;
  bool sm100 = false;
  uint32_t global_size = 0;  // taken modulo kMaxGlobal + 1
  uint32_t smem_size = 0;    // taken modulo kMaxSmem + 1
  uint32_t smem_fill_seed = 0;
  static constexpr uint32_t kMaxGlobal = 1u << 20;
  static constexpr uint32_t kMaxSmem = 256u * 1024;
};

inline EngineInput read_engine_input(Reader& r) {
  EngineInput in;
  in.map = read_map(r);
  in.op = read_op(r);
  in.sm100 = r.u8() & 1;
  in.global_size = r.u32() % (EngineInput::kMaxGlobal + 1);
  in.smem_size = r.u32() % (EngineInput::kMaxSmem + 1);
  in.smem_fill_seed = r.u32();
  return in;
}

inline void write_engine_input(Writer& w, const EngineInput& in) {
  write_map(w, in.map);
  write_op(w, in.op);
  w.uint(in.sm100, 1);
  w.uint(in.global_size, 4);
  w.uint(in.smem_size, 4);
  w.uint(in.smem_fill_seed, 4);
}

// A private folder under $TMPDIR (or /tmp), made on first use and removed at exit.
const std::string& temp_dir();

// Writes `size` bytes to `path` (aborts when it cannot: the harness is broken, not the input).
void write_file(const std::string& path, const void* data, size_t size);

// Harnesses that load files take text, then optional trailer lines:
//   #@files A B           make a.bin of A bytes and b.bin of B bytes next to the file (each at most 1 MiB)
//   #@set PATH=VALUE      an override (scenario fields, architecture fields), one per line
// The trailer lines are YAML comments, so the text loads the same with or without them.
struct TextInput {
  std::string text;
  std::vector<uint64_t> file_sizes;
  std::vector<std::string> overrides;
};
TextInput parse_text_input(const uint8_t* data, size_t size);

}  // namespace tma::fuzz
