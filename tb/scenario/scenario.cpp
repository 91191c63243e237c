#include "tma/scenario/scenario.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "tma/config/arch_config_yaml.h"
#include "tma/descriptor/descriptor_validation.h"
#include "tma/config/paths.h"
#include "tma/config/tensor_map_yaml.h"
#include "tma/config/yaml_reader.h"

namespace tma {

std::optional<L2State> parse_l2_state(const std::string& s) {
  if (s == "clean") return L2State::clean;
  if (s == "dirty") return L2State::dirty;
  if (s == "warm") return L2State::warm;
  return std::nullopt;
}

const char* to_string(L2State s) {
  return s == L2State::clean ? "clean" : s == L2State::dirty ? "dirty" : "warm";
}


namespace {

constexpr uint64_t kDescriptorRegion = 0x7F0000000000ull;

std::vector<uint64_t> dense_strides(const ScenarioTensor& t) {
  std::vector<uint64_t> s;
  uint64_t row = (t.dims[0] * element_bytes(t.dtype) / elements_per_unit(t.dtype) + 15) / 16 * 16;
  for (size_t i = 1; i < t.dims.size(); ++i) {
    s.push_back(row);
    row *= t.dims[i];
  }
  return s;
}

ScenarioTensor read_tensor(const std::string& name, const YamlField& n) {
  n.check_keys({"dtype", "dims", "strides", "address"});
  ScenarioTensor t;
  t.name = name;
  t.dtype = n["dtype"].as_enum(parse_data_type, data_type_names());
  auto dims = n["dims"].as_uint64_list(1, kMaxRank, 1, uint64_t{1} << 32);
  t.dims.assign(dims.begin(), dims.end());
  if (n["strides"].present()) {
    auto s = n["strides"].as_uint64_list(t.dims.size() - 1, t.dims.size() - 1, 16, (uint64_t{1} << 40) - 16);
    t.strides.assign(s.begin(), s.end());
  } else {
    t.strides = dense_strides(t);
  }
  t.address = n["address"].as_uint64(0, (uint64_t{1} << 47) - 1);
  return t;
}

ScenarioDescriptor read_descriptor(const std::string& name, const YamlField& n,
                                   const std::map<std::string, ScenarioTensor>& tensors, GpuArch gpu) {
  n.check_keys({"tensor", "mode", "box", "element_strides", "interleave", "swizzle", "l2_promotion", "oob_fill",
                "lower_corner", "upper_corner", "channels_per_pixel", "pixels_per_column", "location"});
  ScenarioDescriptor d;
  d.name = name;
  if (n["location"].present()) {
    const std::string where = n["location"].as_string();
    if (where != "param" && where != "global")
      throw n["location"].error("expected one of: param, global; got '" + where + "'");
    d.kernel_param = where == "param";
  }
  d.tensor = n["tensor"].as_string();
  auto it = tensors.find(d.tensor);
  if (it == tensors.end()) throw n["tensor"].error("no tensor named '" + d.tensor + "'");
  const ScenarioTensor& t = it->second;
  TensorMap& m = d.map;
  m.mode = n["mode"].as_enum_or(TensorMode::tiled, parse_tensor_mode, tensor_mode_names());
  m.dtype = t.dtype;
  m.rank = static_cast<int>(t.dims.size());
  m.global_address = t.address;
  for (int i = 0; i < m.rank; ++i) m.dims[i] = t.dims[i];
  for (int i = 0; i + 1 < m.rank; ++i) m.strides[i] = t.strides[i];
  const size_t r = static_cast<size_t>(m.rank);
  if (m.mode == TensorMode::tiled || m.mode == TensorMode::gather4) {
    auto box = n["box"].as_uint64_list(r, r, 1, 256);
    for (size_t i = 0; i < r; ++i) m.box[i] = static_cast<uint32_t>(box[i]);
  }
  if (n["element_strides"].present()) {
    auto es = n["element_strides"].as_uint64_list(r, r, 1, 8);
    for (size_t i = 0; i < r; ++i) m.element_strides[i] = static_cast<uint32_t>(es[i]);
  }
  read_map_options(n, m);
  if (m.mode == TensorMode::im2col || m.mode == TensorMode::im2col_w || m.mode == TensorMode::im2col_w128) {
    const size_t nsp = m.mode == TensorMode::im2col ? (r >= 3 ? r - 2 : 0) : 1;
    auto lo = n["lower_corner"].as_int64_list(nsp, nsp, -32768, 32767);
    auto hi = n["upper_corner"].as_int64_list(nsp, nsp, -32768, 32767);
    for (size_t i = 0; i < nsp; ++i) {
      m.lower_corner[i] = static_cast<int32_t>(lo[i]);
      m.upper_corner[i] = static_cast<int32_t>(hi[i]);
    }
    m.channels_per_pixel = static_cast<uint32_t>(n["channels_per_pixel"].as_uint64(1, 256));
    m.pixels_per_column = static_cast<uint32_t>(n["pixels_per_column"].as_uint64_or(128, 1, 1024));
  }
  if (auto err = validate_tensor_map(m, gpu))
    throw n.error("the driver would refuse this descriptor: " + err->rule + ": " + err->message);
  return d;
}

std::string str(uint64_t v) { return std::to_string(v); }

// A GEMM's problem must lie in its tensors and be whole tiles: a tile past m, n or k loads data
// that is not the problem's (past a tensor's end, zeros the TMA fills in), which silently changes
// the traffic. The one partial tile allowed ends at the tensor's edge, where the TMA's
// out-of-bounds fill is what silicon does with a problem that is not a multiple of the tile.
void check_gemm(const YamlField& n, const Scenario& s, const Workload& w) {
  const ScenarioDescriptor& a = s.descriptors.at(w.a);
  const ScenarioDescriptor& b = s.descriptors.at(w.b);
  auto tiled_2d = [&](const char* key, const ScenarioDescriptor& d, const char* shape) {
    if (d.map.mode != TensorMode::tiled || d.map.rank != 2)
      throw n[key].error("descriptor '" + d.name + "' must be tiled over a 2D tensor " + shape + " (it is " +
                         to_string(d.map.mode) + " over rank " + std::to_string(d.map.rank) + ")");
  };
  tiled_2d("a", a, "[K, M]");
  tiled_2d("b", b, "[K, N]");
  if (a.map.box[0] != b.map.box[0])
    throw n["b"].error("the K tiles differ: box[0] of '" + a.name + "' is " + str(a.map.box[0]) + ", of '" + b.name +
                       "' " + str(b.map.box[0]));
  auto extent = [&](const char* key, uint64_t v, const ScenarioDescriptor& d, int dim) {
    const uint64_t size = d.map.dims[dim], tile = d.map.box[dim];
    const std::string of = " of tensor '" + d.tensor + "' (dims[" + std::to_string(dim) + "] = " + str(size) + ")";
    if (v > size) throw n[key].error(std::string(key) + " = " + str(v) + " is beyond the end" + of);
    if (v % tile && v != size)
      throw n[key].error(std::string(key) + " = " + str(v) + " is not a whole number of tiles of '" + d.name +
                         "' (box[" + std::to_string(dim) + "] = " + str(tile) + ") and does not end at the edge" + of +
                         ": the last tile would load past " + key);
  };
  extent("m", w.m, a, 1);
  extent("k", w.k, a, 0);
  extent("n", w.n, b, 1);
  extent("k", w.k, b, 0);
  const uint64_t tm = a.map.box[1], tn = b.map.box[1];
  if (!w.c.empty()) {
    const ScenarioDescriptor& c = s.descriptors.at(w.c);
    tiled_2d("c", c, "[N, M]");
    if (c.map.box[0] != tn || c.map.box[1] != tm)
      throw n["c"].error("descriptor '" + c.name + "' stores the output tile: its box must be [" + str(tn) + ", " +
                         str(tm) + "] (the N and M tiles), not [" + str(c.map.box[0]) + ", " + str(c.map.box[1]) + "]");
    if (c.map.dims[0] < w.n || c.map.dims[1] < w.m)
      throw n["c"].error("tensor '" + c.tensor + "' (dims [" + str(c.map.dims[0]) + ", " + str(c.map.dims[1]) +
                         "]) does not hold the [n, m] = [" + str(w.n) + ", " + str(w.m) + "] output");
  }
  // A cluster takes cluster_size adjacent N tiles (CTA 0 multicasts their A tile).
  const uint64_t n_tiles = (w.n + tn - 1) / tn;
  if (w.multicast_a && n_tiles % s.cluster_size)
    throw n["multicast_a"].error("the " + str(n_tiles) + " N tiles are not a multiple of cluster_size (" +
                                 str(s.cluster_size) + "): a cluster takes cluster_size adjacent N tiles");
}

// A convolution's filter must match its activation: each step loads one channel block of both and
// one filter tap; the K tiles lie in the filter.
void check_conv(const YamlField& n, const Scenario& s, const Workload& w) {
  const TensorMap& x = s.descriptors.at(w.activation).map;
  const ScenarioDescriptor& f = s.descriptors.at(w.filter);
  const TensorMap& m = f.map;
  if (m.mode != TensorMode::tiled || m.rank != 3 || m.box[2] != 1)
    throw n["filter"].error("descriptor '" + f.name + "' must be tiled over a 3D tensor [C, K, taps] with box " +
                            "[channels_per_pixel, K tile, 1]");
  if (m.box[0] != x.channels_per_pixel)
    throw n["filter"].error("box[0] of '" + f.name + "' (" + str(m.box[0]) +
                            ") must be the activation's channels_per_pixel (" + str(x.channels_per_pixel) + ")");
  if (m.dims[0] != x.dims[0])
    throw n["filter"].error("tensor '" + f.tensor + "' has " + str(m.dims[0]) + " channels (dims[0]), the activation " +
                            str(x.dims[0]));
  uint64_t taps = 1;
  for (uint32_t r : w.filter_size) taps *= r;
  if (m.dims[2] != taps)
    throw n["filter_size"].error("the filter has " + str(taps) + " taps, tensor '" + f.tensor + "' " + str(m.dims[2]) +
                                 " (dims[2])");
  const uint64_t k_tiles = (m.dims[1] + m.box[1] - 1) / m.box[1];
  if (w.output_channel_tiles > k_tiles)
    throw n["output_channel_tiles"].error("output_channel_tiles = " + str(w.output_channel_tiles) + " is beyond the " +
                                          str(k_tiles) + " K tiles of '" + f.name + "' (dims[1] = " + str(m.dims[1]) +
                                          ", box[1] = " + str(m.box[1]) + ")");
}

// Attention: Q [head_dim, seq_q, heads, batch] and K, V [head_dim, seq_kv, kv_heads, batch], all
// tiled rank 4 of one data type. Q's box is [d, block_m, query heads per work item, 1], K's and
// V's [d, block_n, 1, 1], d a divisor of head_dim (a tile is head_dim / d boxes). The query heads
// of one work item share a KV head. O, when given, stores Q's box into [head_dim, >= seq_q, heads,
// batch x split_kv] (split_kv partial outputs per sequence).
void check_attention(const YamlField& n, const Scenario& s, const Workload& w) {
  const ScenarioDescriptor& q = s.descriptors.at(w.query);
  const ScenarioDescriptor& k = s.descriptors.at(w.key);
  const ScenarioDescriptor& v = s.descriptors.at(w.value);
  auto tiled_4d = [&](const char* key, const ScenarioDescriptor& d, const char* shape) {
    if (d.map.mode != TensorMode::tiled || d.map.rank != 4)
      throw n[key].error("descriptor '" + d.name + "' must be tiled over a 4D tensor " + shape + " (it is " +
                         to_string(d.map.mode) + " over rank " + std::to_string(d.map.rank) + ")");
    // The output may be wider (split-KV partial outputs are f32).
    if (std::string(key) != "o" && d.map.dtype != q.map.dtype)
      throw n[key].error("descriptor '" + d.name + "' has data type " + to_string(d.map.dtype) + ", Q " +
                         to_string(q.map.dtype));
  };
  tiled_4d("q", q, "[head_dim, seq_q, heads, batch]");
  tiled_4d("k", k, "[head_dim, seq_kv, kv_heads, batch]");
  tiled_4d("v", v, "[head_dim, seq_kv, kv_heads, batch]");
  const uint64_t head_dim = q.map.dims[0], heads = q.map.dims[2], kv_heads = k.map.dims[2], batch = q.map.dims[3];
  for (const ScenarioDescriptor* d : {&k, &v}) {
    const char* key = d == &k ? "k" : "v";
    for (int i = 0; i < 4; ++i)
      if (d->map.dims[i] != k.map.dims[i])
        throw n["v"].error("tensors '" + k.tensor + "' and '" + v.tensor + "' (K and V) must have the same dims");
    if (d->map.dims[0] != head_dim || d->map.dims[3] != batch)
      throw n[key].error("tensor '" + d->tensor + "' must have Q's head_dim (dims[0] = " + str(head_dim) +
                         ") and batch (dims[3] = " + str(batch) + ")");
    if (d->map.box[0] != q.map.box[0] || d->map.box[1] != k.map.box[1] || d->map.box[2] != 1 || d->map.box[3] != 1)
      throw n[key].error("descriptor '" + d->name + "' must have box [" + str(q.map.box[0]) +
                         ", block_n, 1, 1] (Q's box[0], one KV head, one sequence), with K and V the same");
  }
  if (head_dim % q.map.box[0])
    throw n["q"].error("box[0] of '" + q.name + "' (" + str(q.map.box[0]) + ") must divide head_dim (" + str(head_dim) +
                       "): a tile is head_dim / box[0] boxes");
  if (heads % kv_heads)
    throw n["k"].error("Q's " + str(heads) + " heads are not a multiple of K's " + str(kv_heads) + " KV heads");
  const uint64_t group = heads / kv_heads, hq = q.map.box[2];
  if (q.map.box[3] != 1 || group % hq)
    throw n["q"].error(
        "box of '" + q.name + "' must be [d, block_m, h, 1] with h query heads that share a KV head (h " +
        "divides heads / kv_heads = " + str(group) + "); h = " + str(hq) + ", box[3] = " + str(q.map.box[3]));
  const uint64_t seq_q = q.map.dims[1], seq_kv = k.map.dims[1];
  const uint64_t kv_blocks = (seq_kv + k.map.box[1] - 1) / k.map.box[1];
  if (w.causal && seq_kv < seq_q)
    throw n["causal"].error("causal attention needs seq_kv (" + str(seq_kv) + ") >= seq_q (" + str(seq_q) +
                            "): the mask is aligned to the bottom right, as FlashAttention's");
  if (w.split_kv > kv_blocks)
    throw n["split_kv"].error("split_kv = " + str(w.split_kv) + " is more than the " + str(kv_blocks) + " KV blocks");
  if (w.decode && seq_q > q.map.box[1])
    throw n["q"].error("a decode workload has one query block: seq_q (" + str(seq_q) + ") must fit box[1] of '" +
                       q.name + "' (" + str(q.map.box[1]) + ")");
  if (!w.out.empty()) {
    const ScenarioDescriptor& o = s.descriptors.at(w.out);
    tiled_4d("o", o, "[head_dim, seq_q, heads, batch x split_kv]");
    bool same = true;
    for (int i = 0; i < 4; ++i) same = same && o.map.box[i] == q.map.box[i];
    if (!same) throw n["o"].error("descriptor '" + o.name + "' stores the output tile: its box must be Q's");
    if (o.map.dims[0] != head_dim || o.map.dims[1] < seq_q || o.map.dims[2] != heads ||
        o.map.dims[3] < batch * w.split_kv)
      throw n["o"].error("tensor '" + o.tensor + "' must hold [head_dim, seq_q, heads, batch x split_kv] = [" +
                         str(head_dim) + ", " + str(seq_q) + ", " + str(heads) + ", " + str(batch * w.split_kv) + "]");
  }
}

// A stream's store (or reduction) writes back the tile it loaded, at the same coordinates: the
// same rank, data type and box, into a tensor at least as large (a store past its end is dropped).
void check_stream_store(const YamlField& n, const Scenario& s, const Workload& w) {
  const ScenarioDescriptor& l = s.descriptors.at(w.load);
  const ScenarioDescriptor& st = s.descriptors.at(w.store);
  bool same = st.map.rank == l.map.rank && st.map.dtype == l.map.dtype;
  for (int i = 0; same && i < l.map.rank; ++i) same = st.map.box[i] == l.map.box[i];
  if (!same)
    throw n["store"].error("descriptor '" + st.name + "' must have the rank, data type and box of the load '" + l.name +
                           "' (it writes back the tile it loaded)");
  for (int i = 0; i < std::min(l.map.rank, 2); ++i)
    if (st.map.dims[i] < l.map.dims[i])
      throw n["store"].error("tensor '" + st.tensor + "' (dims[" + std::to_string(i) + "] = " + str(st.map.dims[i]) +
                             ") is smaller than the loaded tensor '" + l.tensor + "' (" + str(l.map.dims[i]) +
                             "): stores past its end would be dropped");
}

std::optional<MmaType> parse_mma_dtype(const std::string& s) {
  if (s == "bf16" || s == "fp16") return MmaType::bf16;
  if (s == "fp8" || s == "int8") return MmaType::fp8;
  if (s == "tf32") return MmaType::tf32;
  return std::nullopt;
}

// The MMAs' operand type of a GEMM-like workload: mma_dtype, else what the operand tensor's data
// type says (8-bit: fp8 or int8, the same rate; 16-bit floats: bf16/fp16; 32-bit floats: tf32).
// Needed only when compute_cycles is not set.
void read_mma(const YamlField& n, const Scenario& s, const std::string& operand, Workload& w) {
  if (!n["mma_dtype"].is_null()) {
    w.mma = n["mma_dtype"].as_enum(parse_mma_dtype, "bf16, fp16, fp8, int8, tf32");
    return;
  }
  switch (s.descriptors.at(operand).map.dtype) {
    case DataType::u8: w.mma = MmaType::fp8; return;
    case DataType::f16: case DataType::bf16: w.mma = MmaType::bf16; return;
    case DataType::f32:
    case DataType::f32_ftz:
    case DataType::tf32:
    case DataType::tf32_ftz:
      w.mma = MmaType::tf32;
      return;
    default: break;
  }
  if (!w.compute_cycles)
    throw n["mma_dtype"].error("the MMA's operand type does not follow from descriptor '" + operand + "' (" +
                               to_string(s.descriptors.at(operand).map.dtype) +
                               "): set mma_dtype (bf16, fp16, fp8, int8, tf32) or compute_cycles");
}

std::optional<Raster> parse_raster(const std::string& s) {
  if (s == "n") return Raster::n;
  if (s == "m") return Raster::m;
  if (s == "heuristic") return Raster::heuristic;
  return std::nullopt;
}

// A GEMM-like workload's `schedule:` block (docs/scenarios.md, "Tile schedules"). tile_order is
// the older spelling of raster.
// An attention workload's schedule has persistent only: its work items come in their own order.
void read_schedule(const YamlField& w, TileSchedule& out, bool tiles = true) {
  const YamlField n = w["schedule"];
  if (n.is_null()) return;
  if (!tiles) {
    if (!n.is_map()) throw n.error("expected a mapping with persistent");
    n.check_keys({"persistent"});
    out.persistent = n["persistent"].as_bool_or(true);
    return;
  }
  if (!n.is_map()) throw n.error("expected a mapping of raster, group_size_m, swizzle and persistent");
  n.check_keys({"raster", "group_size_m", "swizzle", "persistent"});
  if (!n["raster"].is_null()) {
    if (!w["tile_order"].is_null())
      throw n["raster"].error("give schedule.raster or tile_order (its older spelling), not both");
    out.raster = n["raster"].as_enum(parse_raster, "m, n, heuristic");
  }
  out.group_size_m = static_cast<uint32_t>(n["group_size_m"].as_uint64_or(0, 1, 1u << 20));
  if (!n["swizzle"].is_null()) {
    out.swizzle = static_cast<uint32_t>(n["swizzle"].as_uint64(1, 8));
    if (out.swizzle & (out.swizzle - 1))
      throw n["swizzle"].error("expected 1, 2, 4 or 8; got " + std::to_string(out.swizzle));
    // CUTLASS's default raster order is its heuristic.
    if (n["raster"].is_null() && w["tile_order"].is_null()) out.raster = Raster::heuristic;
  }
  if (out.group_size_m) {
    if (out.swizzle)
      throw n["group_size_m"].error("group_size_m (Triton's order) and swizzle (CUTLASS's) exclude each other");
    if (!n["raster"].is_null() || !w["tile_order"].is_null())
      throw n["group_size_m"].error(
          "group_size_m sets the order itself (M fastest inside a group): no raster or tile_order with it");
  }
  out.persistent = n["persistent"].as_bool_or(true);
}

// The keys every workload kind takes (read before the kind is known), and those of one kind.
void check_workload_keys(const YamlField& n, std::initializer_list<const char*> own) {
  std::vector<std::string> allowed = {"kind",           "stages",           "compute_cycles",
                                      "setup_cycles",   "issue_cycles",     "handoff_cycles",
                                      "warps_per_cta", "max_tiles_per_sm", "prefetch_descriptors",
                                      "consumer_reads"};
  allowed.insert(allowed.end(), own.begin(), own.end());
  n.check_keys(allowed);
}

Workload read_workload(const YamlField& n, const Scenario& s) {
  Workload w;
  const std::string kind = n["kind"].as_string();
  auto need_descriptor = [&](const char* key) {
    const std::string name = n[key].as_string();
    if (!s.descriptors.count(name)) throw n[key].error("no descriptor named '" + name + "'");
    return name;
  };
  auto optional_descriptor = [&](const char* key) {  // left out or null: none
    return n[key].is_null() ? std::string() : need_descriptor(key);
  };
  w.stages = static_cast<uint32_t>(n["stages"].as_uint64_or(2, 1, 64));
  if (!n["compute_cycles"].is_null())
    w.compute_cycles = static_cast<uint32_t>(n["compute_cycles"].as_uint64(0, 1u << 30));
  w.setup_cycles = static_cast<uint32_t>(n["setup_cycles"].as_uint64_or(0, 0, 1u << 30));
  w.issue_cycles = static_cast<uint32_t>(n["issue_cycles"].as_uint64_or(0, 0, 1u << 30));
  w.handoff_cycles = static_cast<uint32_t>(n["handoff_cycles"].as_uint64_or(0, 0, 1u << 30));
  w.warps_per_cta = static_cast<uint32_t>(n["warps_per_cta"].as_uint64_or(1, 1, 32));  // 1,024 threads at most
  w.max_tiles_per_sm = n["max_tiles_per_sm"].as_uint64_or(0, 0, uint64_t{1} << 40);
  const std::string order = n["tile_order"].as_string_or("row_major");
  if (order != "row_major" && order != "column_major")
    throw n["tile_order"].error("expected one of: row_major, column_major; got '" + order + "'");
  w.schedule.raster = order == "column_major" ? Raster::m : Raster::n;
  w.prefetch_descriptors = n["prefetch_descriptors"].as_bool_or(false);
  w.consumer_reads = n["consumer_reads"].as_bool_or(false);
  if (!n["ctas_per_sm"].is_null()) {
    const YamlField c = n["ctas_per_sm"];
    w.ctas_per_sm = c.is_scalar() && c.as_string() == "auto" ? 0 : static_cast<uint32_t>(c.as_uint64(1, 255));
  }
  if (kind == "gemm") {
    check_workload_keys(n, {"ctas_per_sm", "a", "b", "c", "m", "n", "k", "tile_order", "schedule", "multicast_a",
                            "mma_dtype"});
    read_schedule(n, w.schedule);
    w.kind = WorkloadKind::gemm;
    w.a = need_descriptor("a");
    w.b = need_descriptor("b");
    w.c = optional_descriptor("c");
    w.m = n["m"].as_uint64(1, uint64_t{1} << 32);
    w.n = n["n"].as_uint64(1, uint64_t{1} << 32);
    w.k = n["k"].as_uint64(1, uint64_t{1} << 32);
    w.multicast_a = n["multicast_a"].as_bool_or(false);
    read_mma(n, s, w.a, w);
    if (w.multicast_a && s.cluster_size < 2) throw n["multicast_a"].error("multicast needs cluster_size of 2 or more");
    check_gemm(n, s, w);
  } else if (kind == "conv") {
    check_workload_keys(n, {"ctas_per_sm", "activation", "filter", "filter_size", "output_channel_tiles", "tile_order",
                            "schedule", "mma_dtype"});
    read_schedule(n, w.schedule);
    w.kind = WorkloadKind::conv;
    w.activation = need_descriptor("activation");
    w.filter = need_descriptor("filter");
    const TensorMap& act = s.descriptors.at(w.activation).map;
    if (act.mode != TensorMode::im2col) throw n["activation"].error("the activation descriptor must be im2col");
    read_mma(n, s, w.activation, w);
    const size_t nsp = static_cast<size_t>(act.rank - 2);
    auto fs = n["filter_size"].as_uint64_list(nsp, nsp, 1, 255);
    w.filter_size.assign(fs.begin(), fs.end());
    w.output_channel_tiles = static_cast<uint32_t>(n["output_channel_tiles"].as_uint64_or(1, 1, 1u << 16));
    check_conv(n, s, w);
  } else if (kind == "stream") {
    check_workload_keys(n, {"ctas_per_sm", "load", "store", "reduce", "passes", "tile_order", "multicast",
                            "multicast_issuer", "shared_tiles"});
    w.kind = WorkloadKind::stream;
    w.passes = static_cast<uint32_t>(n["passes"].as_uint64_or(1, 1, 1u << 20));
    // `load` may be left out (or null) only by a store-only (or reduce-only) stream, which has `store`.
    if (n["load"].is_null() && !n["store"].present())
      throw n["load"].error("a stream needs 'load' (the tiles it loads), or 'store' without 'load' for a "
                            "store-only stream");
    w.load = n["load"].is_null() ? std::string() : need_descriptor("load");
    w.store = optional_descriptor("store");
    w.multicast = n["multicast"].as_bool_or(false);
    if (w.multicast) {
      if (s.cluster_size < 2)
        throw n["multicast"].error("multicast needs the scenario's cluster_size to be 2 or more (it is " +
                                   std::to_string(s.cluster_size) + ")");
      if (w.load.empty()) throw n["multicast"].error("a multicast stream needs 'load' (the tiles it multicasts)");
      if (!w.store.empty())
        throw n["store"].error("a multicast stream only loads: 'store' and 'reduce' are not allowed with multicast");
    }
    // The plain counterpart of a multicast stream: the same tiles per cluster, each CTA loading them.
    w.shared_tiles = n["shared_tiles"].as_bool_or(false);
    if (w.shared_tiles) {
      if (s.cluster_size < 2)
        throw n["shared_tiles"].error("shared_tiles needs the scenario's cluster_size to be 2 or more (it is " +
                                      std::to_string(s.cluster_size) + ")");
      if (w.multicast) throw n["shared_tiles"].error("shared_tiles and multicast exclude each other");
      if (w.load.empty()) throw n["shared_tiles"].error("shared_tiles needs 'load'");
      if (!w.store.empty()) throw n["store"].error("a shared_tiles stream only loads: 'store' and 'reduce' are not allowed");
    }
    if (!n["multicast_issuer"].is_null()) {
      const std::string issuer = n["multicast_issuer"].as_string();
      if (issuer != "first" && issuer != "rotate")
        throw n["multicast_issuer"].error("expected one of: first, rotate; got '" + issuer + "'");
      if (!w.multicast) throw n["multicast_issuer"].error("multicast_issuer needs 'multicast: true'");
      w.multicast_rotate = issuer == "rotate";
    }
    w.reduce_op = n["reduce"].as_string_or("");
    if (!w.reduce_op.empty()) {
      OpKind k;
      ReduceOp r;
      if (!parse_op_name("reduce_" + w.reduce_op, k, r))
        throw n["reduce"].error("expected add, min, max, inc, dec, and, or or xor; got '" + w.reduce_op + "'");
      if (w.store.empty()) throw n["reduce"].error("a reduction needs 'store' (the descriptor it reduces into)");
    }
    if (!w.load.empty() && !w.store.empty()) check_stream_store(n, s, w);
  } else if (kind == "attention" || kind == "decode") {
    check_workload_keys(n, {"ctas_per_sm", "q", "k", "v", "o", "causal", "split_kv", "schedule", "mma_dtype"});
    w.kind = WorkloadKind::attention;
    w.decode = kind == "decode";
    w.query = need_descriptor("q");
    w.key = need_descriptor("k");
    w.value = need_descriptor("v");
    w.out = optional_descriptor("o");
    w.causal = n["causal"].as_bool_or(false);
    if (w.decode && w.causal)
      throw n["causal"].error("a decode step's query sees the whole KV cache: causal is for kind: attention");
    w.split_kv = static_cast<uint32_t>(n["split_kv"].as_uint64_or(1, 1, 1u << 16));
    read_schedule(n, w.schedule, false);
    read_mma(n, s, w.query, w);
    check_attention(n, s, w);
  } else if (kind == "ops") {
    check_workload_keys(n, {"ops", "tile_order"});
    w.kind = WorkloadKind::ops;
    YamlField list = n["ops"];
    if (!list.is_list() || list.size() == 0) throw list.error("expected a non-empty list of operations");
    for (size_t i = 0; i < list.size(); ++i) {
      YamlField e = list.at(i);
      e.check_keys({"descriptor", "kind", "coords", "im2col_offsets", "smem_addr"});
      ScenarioOp op;
      op.descriptor = e["descriptor"].as_string();
      auto it = s.descriptors.find(op.descriptor);
      if (it == s.descriptors.end()) throw e["descriptor"].error("no descriptor named '" + op.descriptor + "'");
      const TensorMap& m = it->second.map;
      const std::string k = e["kind"].as_string();
      if (!parse_op_name(k, op.op.kind, op.op.reduce)) throw e["kind"].error("expected one of: " + op_names());
      auto c = e["coords"].as_int64_list(m.rank, m.rank, INT32_MIN, INT32_MAX);
      for (int j = 0; j < m.rank; ++j) op.op.coords[j] = static_cast<int32_t>(c[j]);
      if (m.mode == TensorMode::im2col) {
        auto o = e["im2col_offsets"].as_int64_list(m.rank - 2, m.rank - 2, 0, 65535);
        for (int j = 0; j < m.rank - 2; ++j) op.op.im2col_offsets[j] = static_cast<uint16_t>(o[j]);
      }
      op.op.smem_addr = static_cast<uint32_t>(e["smem_addr"].as_uint64_or(0, 0, 1u << 20));
      w.ops.push_back(op);
    }
  } else {
    throw n["kind"].error("expected one of: gemm, conv, attention, decode, stream, ops; got '" + kind + "'");
  }
  return w;
}

// "a.b.c=value": sets that value (any YAML) in the document tree. Every error names the override's
// path as the field (load_scenario blames the override for it).
void apply_override(YAML::Node root, const std::string& file, const std::string& o) {
  const size_t eq = o.find('=');
  if (eq == std::string::npos || eq == 0)
    throw YamlError(file, 0, "", "override '" + o + "' is not of the form path=value");
  const std::string path = o.substr(0, eq), value = o.substr(eq + 1);
  std::vector<std::string> keys;
  std::stringstream ss(path);
  for (std::string k; std::getline(ss, k, '.');) keys.push_back(k);
  if (keys.empty() || path.back() == '.' || std::count(keys.begin(), keys.end(), std::string()))
    throw YamlError(file, 0, path, "'" + path + "' is not a field path (names joined by '.')");
  YAML::Node node = root;
  std::string at;  // the path walked so far
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    const std::string parent = at.empty() ? "the top level" : "'" + at + "'";
    at += (i ? "." : "") + keys[i];
    if (!node[keys[i]].IsDefined()) {
      std::string names;
      for (const auto& kv : node)
        names += (names.empty() ? "" : ", ") + (kv.first.IsScalar() ? kv.first.Scalar() : std::string("?"));
      throw YamlError(file, 0, path, "the scenario has no '" + at + "' (" + parent + " has: " + names + ")");
    }
    YAML::Node next = node[keys[i]];
    if (!next.IsMap()) throw YamlError(file, 0, path, "'" + at + "' is not a mapping in the scenario");
    node.reset(next);  // rebinds (YAML::Node's operator= would write next's value into node)
  }
  try {
    node[keys.back()] = YAML::Load(value);
  } catch (const YAML::Exception& e) {
    throw YamlError(file, 0, path, "'" + value + "' is not a YAML value: " + e.msg);
  }
}

}  // namespace

// Without a workload: a trace's header (docs/traces.md), whose CTAs come from the trace.
static Scenario read_scenario(const YamlField& root, const std::string& path, bool with_workload) {
  std::vector<std::string> keys = {"name", "description", "sms", "cluster_size", "gpu", "memory_fill", "l2_state",
                                   "l2_dirty_bytes", "l2_warm", "arch", "tensors", "descriptors"};
  if (with_workload) keys.push_back("workload");
  root.check_keys(keys);
  Scenario s;
  s.path = path;
  s.name = root["name"].as_string();
  s.description = root["description"].as_string_or("");
  s.sms = static_cast<uint32_t>(root["sms"].as_uint64(1, 1024));
  s.cluster_size = static_cast<uint32_t>(root["cluster_size"].as_uint64_or(1, 1, 16));
  if (s.sms % s.cluster_size) throw root["cluster_size"].error("sms must be a multiple of cluster_size");
  s.gpu = root["gpu"].as_enum_or(GpuArch::sm90, parse_gpu_arch, "sm_90, sm_100");
  const std::string fill = root["memory_fill"].as_string_or("word_hash");
  if (fill != "word_hash" && fill != "zero") throw root["memory_fill"].error("expected word_hash or zero");
  s.memory_fill = fill == "zero" ? MemoryFill::zero : MemoryFill::word_hash;
  // Relative to the scenario's folder, then the project's (configs/arch/h100.yaml by default).
  s.arch = root["arch"].present() ? existing_yaml_path(root["arch"]) : resolve_project_path(kDefaultArchFile);
  s.l2_state = root["l2_state"].as_enum_or(L2State::clean, parse_l2_state, "clean, dirty, warm");
  if (!root["l2_warm"].is_null()) {  // the older spelling of l2_state: warm
    if (!root["l2_state"].is_null()) throw root["l2_warm"].error("give l2_state or l2_warm, not both");
    if (root["l2_warm"].as_bool_or(false)) s.l2_state = L2State::warm;
  }
  s.l2_dirty_bytes = root["l2_dirty_bytes"].as_uint64_or(0, 0, 1ull << 40);
  if (s.l2_dirty_bytes && s.l2_state != L2State::dirty)
    throw root["l2_dirty_bytes"].error("l2_dirty_bytes needs l2_state: dirty");
  YamlField tensors = root["tensors"];
  if (!tensors.is_map()) throw tensors.error("expected a mapping of tensor names to tensors");
  for (const std::string& k : tensors.keys()) s.tensors[k] = read_tensor(k, tensors[k]);
  YamlField descs = root["descriptors"];
  if (!descs.is_map()) throw descs.error("expected a mapping of descriptor names to descriptors");
  uint64_t slot = 0;
  for (const std::string& k : descs.keys()) {
    ScenarioDescriptor d = read_descriptor(k, descs[k], s.tensors, s.gpu);
    d.address = kDescriptorRegion + 128 * slot++;
    s.descriptors[k] = d;
  }
  if (with_workload) s.workload = read_workload(root["workload"], s);
  else s.workload.kind = WorkloadKind::trace;
  return s;
}

// The scenario at `root` of `doc`, `prefix` its path in the document ("" or "scenario."), the
// overrides applied below it first (each names a path from the scenario's top).
static Scenario read_overridden(const YamlDoc& doc, const YamlField& root, const std::string& prefix,
                                const std::vector<std::string>& overrides, bool with_workload) {
  const std::string& path = doc.file();
  // Overrides change the tree in place: every field keeps its line in the file, and an error in
  // (or below) a value an override set is that override's.
  std::vector<std::string> full;
  for (const std::string& o : overrides) full.push_back(prefix + o);
  for (size_t i = 0; i < overrides.size(); ++i) {
    try {
      apply_override(doc.node(), path, full[i]);
    } catch (const YamlError& e) {
      if (e.field().empty()) throw;
      throw OverrideError(e, i, overrides[i]);
    }
  }
  try {
    return read_scenario(root, path, with_workload);
  } catch (const YamlError& e) {
    if (const std::optional<size_t> i = override_of(full, e.field())) throw OverrideError(e, *i, overrides[*i]);
    throw;
  }
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  YamlDoc doc = YamlDoc::load(path);
  const YamlField root = doc.root();
  const std::string what = "a scenario is a mapping of name, sms, tensors, descriptors and workload";
  if (root.is_null()) throw root.error("the file is empty: " + what);
  if (!root.is_map()) throw root.error("expected a mapping: " + what);
  return read_overridden(doc, root, "", overrides, true);
}

Scenario read_scenario_part(const YamlDoc& doc, const std::string& key, const std::vector<std::string>& overrides) {
  const YamlField root = doc.root()[key];
  if (!root.is_map())
    throw root.error("expected a mapping of name, sms, tensors and descriptors (a scenario without its workload)");
  return read_overridden(doc, root, key + ".", overrides, false);
}

std::optional<size_t> override_of(const std::vector<std::string>& overrides, const std::string& field) {
  for (size_t i = overrides.size(); i-- > 0;) {
    const std::string p = overrides[i].substr(0, overrides[i].find('='));
    if (field == p || (field.rfind(p, 0) == 0 && (field[p.size()] == '.' || field[p.size()] == '['))) return i;
  }
  return std::nullopt;
}

OverrideError::OverrideError(const YamlError& e, size_t index, const std::string& override_text)
    : YamlError(e.file(), 0, e.field(), e.problem() + " (set by the override '" + override_text + "')"),
      index_(index),
      cause_(e.problem()) {}

YAML::Node scenario_document(const std::string& path, const std::vector<std::string>& overrides) {
  YAML::Node raw = YAML::LoadFile(path);
  for (const std::string& o : overrides) apply_override(raw, path, o);
  return raw;
}

}  // namespace tma
