// The C ABI of tb/bindings/tma_dpi.h over the reference engine and the descriptor.
#include "tma/bindings/tma_dpi.h"

#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "tma/descriptor/descriptor_codec.h"
#include "tma/descriptor/descriptor_validation.h"
#include "tma/descriptor/driver_descriptor.h"
#include "tma/descriptor/tensor_map.h"
#include "tma/descriptor/tma_op.h"
#include "tma/golden/golden_case.h"
#include "tma/golden/golden_check.h"
#include "tma/reference/reference_engine.h"

using namespace tma;

namespace {

thread_local std::string g_error, g_rule;

int bad(const std::string& why) {
  g_error = why;
  g_rule.clear();
  return -1;
}
void clear() {
  g_error.clear();
  g_rule.clear();
}

TensorMap* as_map(void* p) { return static_cast<TensorMap*>(p); }
const TensorMap* as_map(const void* p) { return static_cast<const TensorMap*>(p); }
TmaOp* as_op(void* p) { return static_cast<TmaOp*>(p); }
std::vector<uint8_t>* as_buf(void* p) { return static_cast<std::vector<uint8_t>*>(p); }
const std::vector<uint8_t>* as_buf(const void* p) { return static_cast<const std::vector<uint8_t>*>(p); }

bool arch_of(const char* s, GpuArch& arch) {
  const auto a = parse_gpu_arch(s ? s : "");
  if (!a) return false;
  arch = *a;
  return true;
}

bool in_range(int i, size_t n) { return i >= 0 && static_cast<size_t>(i) < n; }

int run(const TensorMap& map, const TmaOp& op, std::vector<uint8_t>& global, std::vector<uint8_t>& smem,
        const char* arch_name, uint32_t* tx_bytes) {
  ReferenceOptions opt;
  if (!arch_of(arch_name, opt.arch)) return bad(std::string("unknown arch '") + (arch_name ? arch_name : "") + "'");
  clear();
  const OpResult r = reference_execute(map, op, global, smem, opt);
  if (tx_bytes) *tx_bytes = r.tx_bytes;
  if (r.outcome == Outcome::encode_error) {
    const auto e = validate_tensor_map(map, opt.arch);
    g_rule = e ? e->rule : "";
    g_error = e ? e->message : r.reason;
    return TMA_ENCODE_ERROR;
  }
  if (r.outcome == Outcome::fault) {
    g_error = r.reason;
    return TMA_FAULT;
  }
  return TMA_OK;
}

}  // namespace

extern "C" {

const char* tma_version(void) { return TMA_VERSION; }
const char* tma_last_error(void) { return g_error.c_str(); }
const char* tma_last_rule(void) { return g_rule.c_str(); }

void* tma_map_new(const char* mode, const char* dtype, int rank, int64_t global_address) {
  const auto m = parse_tensor_mode(mode ? mode : "");
  const auto t = parse_data_type(dtype ? dtype : "");
  if (!m) return bad(std::string("unknown mode '") + (mode ? mode : "") + "'"), nullptr;
  if (!t) return bad(std::string("unknown dtype '") + (dtype ? dtype : "") + "'"), nullptr;
  if (rank < 1 || rank > kMaxRank) return bad("rank " + std::to_string(rank) + " is not 1..5"), nullptr;
  auto* map = new (std::nothrow) TensorMap;
  if (!map) return nullptr;
  map->mode = *m;
  map->dtype = *t;
  map->rank = rank;
  map->global_address = static_cast<uint64_t>(global_address);
  clear();
  return map;
}

void tma_map_free(void* map) { delete as_map(map); }

int tma_map_set_dim(void* map, int i, int64_t elements) {
  if (!map || !in_range(i, kMaxRank)) return bad("globalDim index " + std::to_string(i));
  as_map(map)->dims[i] = static_cast<uint64_t>(elements);
  return 0;
}
int tma_map_set_stride(void* map, int i, int64_t bytes) {
  if (!map || !in_range(i, kMaxRank - 1)) return bad("globalStrides index " + std::to_string(i));
  as_map(map)->strides[i] = static_cast<uint64_t>(bytes);
  return 0;
}
int tma_map_set_box(void* map, int i, int elements) {
  if (!map || !in_range(i, kMaxRank)) return bad("boxDim index " + std::to_string(i));
  as_map(map)->box[i] = static_cast<uint32_t>(elements);
  return 0;
}
int tma_map_set_element_stride(void* map, int i, int stride) {
  if (!map || !in_range(i, kMaxRank)) return bad("elementStrides index " + std::to_string(i));
  as_map(map)->element_strides[i] = static_cast<uint32_t>(stride);
  return 0;
}
int tma_map_set_corner(void* map, int i, int lower, int upper) {
  if (!map || !in_range(i, 3)) return bad("corner index " + std::to_string(i));
  as_map(map)->lower_corner[i] = lower;
  as_map(map)->upper_corner[i] = upper;
  return 0;
}
int tma_map_set_im2col(void* map, int channels_per_pixel, int pixels_per_column) {
  if (!map) return bad("no map");
  as_map(map)->channels_per_pixel = static_cast<uint32_t>(channels_per_pixel);
  as_map(map)->pixels_per_column = static_cast<uint32_t>(pixels_per_column);
  return 0;
}

int tma_map_set(void* map, const char* field, const char* value) {
  if (!map || !field || !value) return bad("null argument");
  TensorMap& m = *as_map(map);
  const std::string f = field, v = value;
  bool ok = false;
  if (f == "swizzle") {
    ok = parse_swizzle_name(v, m.swizzle, m.swizzle_atom);
  } else if (f == "interleave") {
    if (auto x = parse_interleave(v)) m.interleave = *x, ok = true;
  } else if (f == "l2_promotion") {
    if (auto x = parse_l2_promotion(v)) m.l2_promotion = *x, ok = true;
  } else if (f == "oob_fill") {
    if (auto x = parse_oob_fill(v)) m.oob_fill = *x, ok = true;
  } else {
    return bad("unknown field '" + f + "' (swizzle, interleave, l2_promotion, oob_fill)");
  }
  return ok ? (clear(), 0) : bad("unknown " + f + " '" + v + "'");
}

int tma_validate(const void* map, const char* arch_name) {
  GpuArch arch;
  if (!map) return bad("no map");
  if (!arch_of(arch_name, arch)) return bad(std::string("unknown arch '") + (arch_name ? arch_name : "") + "'");
  clear();
  if (auto e = validate_tensor_map(*as_map(map), arch)) {
    g_rule = e->rule;
    g_error = e->message;
    return TMA_ENCODE_ERROR;
  }
  return TMA_OK;
}

int tma_map_encode(const void* map, uint8_t* out) {
  if (!map || !out) return bad("null argument");
  try {
    const auto b = encode_descriptor(*as_map(map));
    std::memcpy(out, b.data(), b.size());
  } catch (const std::exception& e) {
    return bad(e.what());
  }
  clear();
  return 0;
}

int tma_map_encode_driver(const void* map, int64_t global_base, uint8_t* out) {
  if (!map || !out) return bad("null argument");
  try {
    const auto b = encode_driver_descriptor(*as_map(map), static_cast<uint64_t>(global_base));
    std::memcpy(out, b.data(), b.size());
  } catch (const std::exception& e) {
    return bad(e.what());
  }
  clear();
  return 0;
}

void* tma_map_decode(const uint8_t* bytes) {
  if (!bytes) return bad("null argument"), nullptr;
  std::string error;
  auto m = decode_descriptor(bytes, &error);
  if (!m) return bad("descriptor does not decode: " + error), nullptr;
  clear();
  return new (std::nothrow) TensorMap(*m);
}

void* tma_map_decode_driver(const uint8_t* bytes, int64_t global_base) {
  if (!bytes) return bad("null argument"), nullptr;
  std::string error;
  auto m = decode_driver_descriptor(bytes, static_cast<uint64_t>(global_base), &error);
  if (!m) return bad("CUtensorMap does not decode: " + error), nullptr;
  clear();
  return new (std::nothrow) TensorMap(*m);
}

int tma_map_equal(const void* a, const void* b) {
  return a && b && canonical_form(*as_map(a)) == canonical_form(*as_map(b)) ? 1 : 0;
}

void* tma_op_new(const char* kind, int smem_addr) {
  auto* op = new (std::nothrow) TmaOp;
  if (!op) return nullptr;
  if (!parse_op_name(kind ? kind : "", op->kind, op->reduce)) {
    delete op;
    return bad(std::string("unknown op '") + (kind ? kind : "") + "' (one of: " + op_names() + ")"), nullptr;
  }
  op->smem_addr = static_cast<uint32_t>(smem_addr);
  clear();
  return op;
}
void tma_op_free(void* op) { delete as_op(op); }
int tma_op_set_coord(void* op, int i, int coord) {
  if (!op || !in_range(i, 5)) return bad("coordinate index " + std::to_string(i));
  as_op(op)->coords[i] = coord;
  return 0;
}
int tma_op_set_im2col(void* op, int i, int offset) {
  if (!op || !in_range(i, 3)) return bad("im2col offset index " + std::to_string(i));
  as_op(op)->im2col_offsets[i] = static_cast<uint16_t>(offset);
  return 0;
}
int tma_op_set_wide(void* op, int w_halo, int w_offset) {
  if (!op) return bad("no op");
  as_op(op)->w_halo = static_cast<uint16_t>(w_halo);
  as_op(op)->w_offset = static_cast<uint16_t>(w_offset);
  return 0;
}

int tma_execute(const void* map, const void* op, uint8_t* global, int64_t global_size, uint8_t* smem,
                int64_t smem_size, const char* arch, uint32_t* tx_bytes) {
  if (!map || !op || (!global && global_size) || (!smem && smem_size) || global_size < 0 || smem_size < 0)
    return bad("null argument");
  // The engine works on vectors: copies, written back when the operation completed.
  std::vector<uint8_t> g(global, global + global_size), s(smem, smem + smem_size);
  const int rc = run(*as_map(map), *static_cast<const TmaOp*>(op), g, s, arch, tx_bytes);
  if (rc == TMA_OK) {
    if (global_size) std::memcpy(global, g.data(), g.size());
    if (smem_size) std::memcpy(smem, s.data(), s.size());
  }
  return rc;
}

void* tma_buf_new(int64_t size, int fill) {
  if (size < 0) return bad("negative size"), nullptr;
  return new (std::nothrow) std::vector<uint8_t>(static_cast<size_t>(size), static_cast<uint8_t>(fill));
}
void tma_buf_free(void* buf) { delete as_buf(buf); }
int64_t tma_buf_size(const void* buf) { return buf ? static_cast<int64_t>(as_buf(buf)->size()) : -1; }
int tma_buf_get(const void* buf, int64_t offset) {
  if (!buf || offset < 0 || static_cast<uint64_t>(offset) >= as_buf(buf)->size()) return -1;
  return (*as_buf(buf))[offset];
}
int tma_buf_set(void* buf, int64_t offset, int value) {
  if (!buf || offset < 0 || static_cast<uint64_t>(offset) >= as_buf(buf)->size()) return bad("offset out of range");
  (*as_buf(buf))[offset] = static_cast<uint8_t>(value);
  return 0;
}
int tma_buf_word_hash(void* buf, int64_t offset, int64_t size, int seed) {
  if (!buf || offset < 0 || size < 0 || static_cast<uint64_t>(offset + size) > as_buf(buf)->size())
    return bad("range out of the buffer");
  const std::vector<uint8_t> img = word_hash_image(static_cast<uint64_t>(size), static_cast<uint32_t>(seed));
  std::memcpy(as_buf(buf)->data() + offset, img.data(), img.size());
  return 0;
}
namespace {
uint8_t* span128(const void* buf, int64_t offset) {
  if (!buf || offset < 0 || static_cast<uint64_t>(offset) + 128 > as_buf(buf)->size()) return nullptr;
  return const_cast<uint8_t*>(as_buf(buf)->data()) + offset;
}
}  // namespace
int tma_map_encode_buf(const void* map, void* buf, int64_t offset) {
  uint8_t* p = span128(buf, offset);
  return p ? tma_map_encode(map, p) : bad("128 bytes at the offset are not in the buffer");
}
int tma_map_encode_driver_buf(const void* map, int64_t global_base, void* buf, int64_t offset) {
  uint8_t* p = span128(buf, offset);
  return p ? tma_map_encode_driver(map, global_base, p) : bad("128 bytes at the offset are not in the buffer");
}
void* tma_map_decode_buf(const void* buf, int64_t offset) {
  const uint8_t* p = span128(buf, offset);
  return p ? tma_map_decode(p) : (bad("128 bytes at the offset are not in the buffer"), nullptr);
}
void* tma_map_decode_driver_buf(const void* buf, int64_t offset, int64_t global_base) {
  const uint8_t* p = span128(buf, offset);
  return p ? tma_map_decode_driver(p, global_base) : (bad("128 bytes at the offset are not in the buffer"), nullptr);
}
int tma_execute_buf(const void* map, const void* op, void* global, void* smem, const char* arch, int* tx_bytes) {
  if (!map || !op || !global || !smem) return bad("null argument");
  std::vector<uint8_t> g = *as_buf(global), s = *as_buf(smem);
  uint32_t tx = 0;
  const int rc = run(*as_map(map), *static_cast<const TmaOp*>(op), g, s, arch, &tx);
  if (tx_bytes) *tx_bytes = static_cast<int>(tx);
  if (rc == TMA_OK) {
    as_buf(global)->swap(g);
    as_buf(smem)->swap(s);
  }
  return rc;
}

namespace {
const GoldenCase* as_case(const void* p) { return static_cast<const GoldenCase*>(p); }
int outcome_code(Outcome o) { return o == Outcome::ok ? TMA_OK : o == Outcome::encode_error ? TMA_ENCODE_ERROR : TMA_FAULT; }
}  // namespace

void* tma_golden_load(const char* path) {
  try {
    auto* c = new GoldenCase(load_golden_case(path ? path : ""));
    clear();
    return c;
  } catch (const std::exception& e) {
    return bad(e.what()), nullptr;
  }
}
void tma_golden_free(void* golden) { delete static_cast<GoldenCase*>(golden); }
const char* tma_golden_name(const void* golden) { return golden ? as_case(golden)->name.c_str() : ""; }
const char* tma_golden_arch(const void* golden) {
  return !golden ? "" : as_case(golden)->arch == GpuArch::sm100 ? "sm_100" : "sm_90";
}
void* tma_golden_map(const void* golden) { return golden ? new (std::nothrow) TensorMap(as_case(golden)->map) : nullptr; }
void* tma_golden_op(const void* golden) { return golden ? new (std::nothrow) TmaOp(as_case(golden)->op) : nullptr; }
int tma_golden_outcome(const void* golden) { return golden ? outcome_code(as_case(golden)->outcome) : bad("no case"); }
int tma_golden_tx_bytes(const void* golden) {
  return golden && as_case(golden)->tx_bytes ? static_cast<int>(*as_case(golden)->tx_bytes) : -1;
}
void* tma_golden_global(const void* golden) {
  return golden ? new (std::nothrow) std::vector<uint8_t>(word_hash_image(as_case(golden)->global_size)) : nullptr;
}
void* tma_golden_smem(const void* golden) {
  return golden ? new (std::nothrow) std::vector<uint8_t>(initial_smem(*as_case(golden), 228 * 1024)) : nullptr;
}
void* tma_golden_expected(const void* golden, int* in_global, int64_t* offset) {
  if (!golden || as_case(golden)->outcome != Outcome::ok) return nullptr;
  const GoldenCase& c = *as_case(golden);
  if (in_global) *in_global = c.has_global_window ? 1 : 0;
  if (offset) *offset = c.has_global_window ? static_cast<int64_t>(c.global_window_offset) : 0;
  if (c.has_global_window) return new (std::nothrow) std::vector<uint8_t>(c.global_window);
  return new (std::nothrow) std::vector<uint8_t>(c.smem_image.begin(), c.smem_image.begin() + c.smem_bytes);
}

}  // extern "C"
