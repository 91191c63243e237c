#include "scenario.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

#include "descriptor_validation.h"
#include "yaml_reader.h"

namespace tma {

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
  m.interleave = n["interleave"].as_enum_or(Interleave::none, parse_interleave, interleave_names());
  const std::string sw = n["swizzle"].as_string_or("none");
  if (!parse_swizzle_name(sw, m.swizzle, m.swizzle_atom))
    throw n["swizzle"].error("expected one of: " + swizzle_names() + "; got '" + sw + "'");
  m.l2_promotion = n["l2_promotion"].as_enum_or(L2Promotion::none, parse_l2_promotion, l2_promotion_names());
  m.oob_fill = n["oob_fill"].as_enum_or(OobFill::zero, parse_oob_fill, oob_fill_names());
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

Workload read_workload(const YamlField& n, const Scenario& s) {
  Workload w;
  const std::string kind = n["kind"].as_string();
  auto need_descriptor = [&](const char* key) {
    const std::string name = n[key].as_string();
    if (!s.descriptors.count(name)) throw n[key].error("no descriptor named '" + name + "'");
    return name;
  };
  auto optional_descriptor = [&](const char* key) {
    return n[key].present() ? need_descriptor(key) : std::string();
  };
  w.stages = static_cast<uint32_t>(n["stages"].as_uint64_or(2, 1, 64));
  w.compute_cycles = static_cast<uint32_t>(n["compute_cycles"].as_uint64_or(0, 0, 1u << 30));
  w.max_tiles_per_sm = n["max_tiles_per_sm"].as_uint64_or(0, 0, uint64_t{1} << 40);
  const std::string order = n["tile_order"].as_string_or("row_major");
  if (order != "row_major" && order != "column_major")
    throw n["tile_order"].error("expected one of: row_major, column_major; got '" + order + "'");
  w.column_major = order == "column_major";
  w.prefetch_descriptors = n["prefetch_descriptors"].as_bool_or(false);
  w.consumer_reads = n["consumer_reads"].as_bool_or(false);
  if (kind == "gemm") {
    n.check_keys({"kind", "a", "b", "c", "m", "n", "k", "stages", "compute_cycles", "max_tiles_per_sm", "tile_order",
                  "prefetch_descriptors", "multicast_a", "consumer_reads"});
    w.kind = WorkloadKind::gemm;
    w.a = need_descriptor("a");
    w.b = need_descriptor("b");
    w.c = optional_descriptor("c");
    w.m = n["m"].as_uint64(1, uint64_t{1} << 32);
    w.n = n["n"].as_uint64(1, uint64_t{1} << 32);
    w.k = n["k"].as_uint64(1, uint64_t{1} << 32);
    w.multicast_a = n["multicast_a"].as_bool_or(false);
    if (w.multicast_a && s.cluster_size < 2) throw n["multicast_a"].error("multicast needs cluster_size of 2 or more");
  } else if (kind == "conv") {
    n.check_keys({"kind", "activation", "filter", "filter_size", "output_channel_tiles", "stages", "compute_cycles",
                  "max_tiles_per_sm", "tile_order", "prefetch_descriptors", "consumer_reads"});
    w.kind = WorkloadKind::conv;
    w.activation = need_descriptor("activation");
    w.filter = need_descriptor("filter");
    const TensorMap& act = s.descriptors.at(w.activation).map;
    if (act.mode != TensorMode::im2col) throw n["activation"].error("the activation descriptor must be im2col");
    const size_t nsp = static_cast<size_t>(act.rank - 2);
    auto fs = n["filter_size"].as_uint64_list(nsp, nsp, 1, 255);
    w.filter_size.assign(fs.begin(), fs.end());
    w.output_channel_tiles = static_cast<uint32_t>(n["output_channel_tiles"].as_uint64_or(1, 1, 1u << 16));
  } else if (kind == "stream") {
    n.check_keys({"kind", "load", "store", "reduce", "passes", "stages", "compute_cycles", "max_tiles_per_sm",
                  "tile_order", "prefetch_descriptors", "consumer_reads", "multicast", "multicast_issuer", "shared_tiles"});
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
  } else if (kind == "ops") {
    n.check_keys({"kind", "ops", "stages", "compute_cycles", "max_tiles_per_sm", "tile_order", "prefetch_descriptors",
                  "consumer_reads"});
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
    throw n["kind"].error("expected one of: gemm, conv, stream, ops; got '" + kind + "'");
  }
  return w;
}

// "a.b.c=value": set that scalar (or YAML value) in the document tree.
void apply_override(YAML::Node root, const std::string& o) {
  const size_t eq = o.find('=');
  if (eq == std::string::npos || eq == 0) throw std::runtime_error("override '" + o + "' is not of the form path=value");
  const std::string path = o.substr(0, eq), value = o.substr(eq + 1);
  std::vector<std::string> keys;
  std::stringstream ss(path);
  for (std::string k; std::getline(ss, k, '.');) keys.push_back(k);
  std::vector<YAML::Node> chain{root};
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    YAML::Node next = chain.back()[keys[i]];
    if (!next.IsMap()) throw std::runtime_error("override '" + o + "': '" + keys[i] + "' is not a mapping in the scenario");
    chain.push_back(next);
  }
  YAML::Node parent = chain.back();
  parent[keys.back()] = YAML::Load(value);
}

}  // namespace

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  YamlDoc doc = YamlDoc::load(path);
  if (!overrides.empty()) {
    YAML::Node raw;
    try {
      raw = YAML::LoadFile(path);
    } catch (const YAML::Exception& e) {
      throw YamlError(path, 0, "", e.what());
    }
    for (const std::string& o : overrides) apply_override(raw, o);
    YAML::Emitter out;
    out << raw;
    doc = YamlDoc::parse(out.c_str(), path + " (with overrides)");
  }
  YamlField root = doc.root();
  root.check_keys({"name", "description", "sms", "cluster_size", "gpu", "memory_fill", "l2_warm", "arch", "tensors",
                   "descriptors", "workload"});
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
  s.arch = root["arch"].as_string_or("configs/arch/h100.yaml");
  s.l2_warm = root["l2_warm"].as_bool_or(false);
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
  s.workload = read_workload(root["workload"], s);
  return s;
}

YAML::Node scenario_document(const std::string& path, const std::vector<std::string>& overrides) {
  YAML::Node raw = YAML::LoadFile(path);
  for (const std::string& o : overrides) apply_override(raw, o);
  return raw;
}

}  // namespace tma
