#include "tma/golden/golden_case.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

#include "tma/config/tensor_map_yaml.h"
#include "tma/config/yaml_reader.h"

namespace fs = std::filesystem;

namespace tma {

std::vector<uint8_t> word_hash_image(uint64_t size, uint32_t seed) {
  std::vector<uint8_t> img(size);
  for (uint64_t w = 0; w * 4 < size; ++w) {
    const uint32_t v = static_cast<uint32_t>((w + seed) * 2654435761u + 0x12345u);
    for (int b = 0; b < 4 && w * 4 + b < size; ++b) img[w * 4 + b] = static_cast<uint8_t>(v >> (8 * b));
  }
  return img;
}

namespace {

std::vector<uint8_t> read_binary(const YamlField& field, const std::string& case_path, uint64_t expect_size) {
  const std::string name = field.as_string();
  const fs::path p = fs::path(case_path).parent_path() / name;
  // A folder (an empty name is the case's own) opens but throws std::ios_base::failure on the
  // first read, and a device may never end: only a regular file is read.
  std::error_code ec;
  if (fs::exists(p, ec) && !fs::is_regular_file(p, ec))
    throw field.error("cannot read '" + p.string() + "': not a regular file");
  std::ifstream in(p, std::ios::binary);
  if (!in) throw field.error("cannot read '" + p.string() + "'");
  std::vector<uint8_t> data;
  try {
    data.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::ios_base::failure& e) {
    throw field.error("cannot read '" + p.string() + "': " + e.what());
  }
  if (expect_size != UINT64_MAX && data.size() != expect_size)
    throw field.error("'" + p.string() + "' has " + std::to_string(data.size()) + " bytes, expected " +
                      std::to_string(expect_size));
  return data;
}

Outcome parse_outcome_name(const YamlField& f) {
  const std::string s = f.as_string();
  if (s == "ok") return Outcome::ok;
  if (s == "encode_error") return Outcome::encode_error;
  if (s == "fault") return Outcome::fault;
  throw f.error("expected one of: ok, encode_error, fault; got '" + s + "'");
}

}  // namespace

GoldenCase load_golden_case(const std::string& path) {
  YamlDoc doc = YamlDoc::load(path);
  YamlField root = doc.root();
  root.check_keys({"schema", "name", "origin", "intent", "arch", "global", "tensor_map", "op", "expect",
                   "driver_descriptor", "silicon"});
  GoldenCase c;
  c.path = path;
  const std::string schema = root["schema"].as_string();
  if (schema != "tma-golden/1") throw root["schema"].error("expected 'tma-golden/1', got '" + schema + "'");
  c.name = root["name"].as_string();
  c.origin = root["origin"].as_string_or("");
  c.arch = root["arch"].as_enum_or(GpuArch::sm90, parse_gpu_arch, "sm_90, sm_100");

  YamlField g = root["global"];
  g.check_keys({"fill", "size"});
  if (g["fill"].as_string() != "word_hash") throw g["fill"].error("expected 'word_hash'");
  c.global_size = g["size"].as_uint64(0, uint64_t{1} << 34);

  c.map = read_tensor_map(root["tensor_map"]);
  YamlField op = root["op"];
  c.op = read_op(op, c.map, {"smem_fill"});
  if (op["smem_fill"].present()) {
    YamlField f = op["smem_fill"];
    f.check_keys({"fill", "seed", "size"});
    if (f["fill"].as_string() != "word_hash") throw f["fill"].error("expected 'word_hash'");
    c.has_smem_fill = true;
    c.smem_fill_seed = static_cast<uint32_t>(f["seed"].as_uint64(0, UINT32_MAX));
    c.smem_fill_size = static_cast<uint32_t>(f["size"].as_uint64(0, 1u << 20));
  } else if (c.op.kind == OpKind::store || c.op.kind == OpKind::reduce) {
    throw op.error("a store or reduction needs 'smem_fill' (what shared memory held before it)");
  }

  YamlField e = root["expect"];
  e.check_keys({"outcome", "smem_bytes", "smem_image", "tx_bytes", "global_window"});
  c.outcome = parse_outcome_name(e["outcome"]);
  if (c.outcome == Outcome::ok) {
    if (e["global_window"].present()) {
      YamlField w = e["global_window"];
      w.check_keys({"offset", "size", "image"});
      c.has_global_window = true;
      c.global_window_offset = w["offset"].as_uint64(0, c.global_size);
      const uint64_t size = w["size"].as_uint64(0, c.global_size - c.global_window_offset);
      c.global_window = read_binary(w["image"], path, size);
    } else {
      c.smem_bytes = static_cast<uint32_t>(e["smem_bytes"].as_uint64(0, 1u << 20));
      c.smem_image = read_binary(e["smem_image"], path, c.smem_bytes);
      if (e["tx_bytes"].present()) c.tx_bytes = static_cast<uint32_t>(e["tx_bytes"].as_uint64(0, UINT32_MAX));
    }
  }
  if (root["driver_descriptor"].present()) c.driver_descriptor = read_binary(root["driver_descriptor"], path, 128);
  if (root["silicon"].present()) {
    YamlField s = root["silicon"];
    s.check_keys({"cold_cycles", "warm_cycles"});
    if (s["cold_cycles"].present()) c.cold_cycles = s["cold_cycles"].as_uint64();
    if (s["warm_cycles"].present()) c.warm_cycles = s["warm_cycles"].as_uint64();
  }
  return c;
}

std::vector<std::string> find_golden_cases(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    if (fs::is_directory(p)) {
      for (const auto& entry : fs::recursive_directory_iterator(p))
        if (entry.is_regular_file() && entry.path().extension() == ".yaml") out.push_back(entry.path().string());
    } else {
      out.push_back(p);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tma
