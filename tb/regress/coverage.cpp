#include "tma/regress/coverage.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "tma/descriptor/descriptor_validation.h"

namespace tma {

namespace {

constexpr const char* kSchema = "tma-coverage/1";

// Group and cross names (the JSON keys).
constexpr const char* kSwizzleDtypeModeOob = "swizzle x dtype x mode x oob";
constexpr const char* kOpDtype = "op x dtype";
constexpr const char* kRankModeInterleave = "rank x mode x interleave";
constexpr const char* kRuleMode = "validation_rule x mode";
constexpr const char* kSwizzlePhase = "swizzle x smem_phase";
constexpr const char* kFillDtype = "oob_fill x dtype";

const std::vector<std::string> kOobNames = {"none", "low", "high", "both", "outside"};

bool wide_mode(TensorMode m) { return m == TensorMode::im2col_w || m == TensorMode::im2col_w128; }

// ---------------------------------------------------------------- touched coordinates

struct Touch {
  bool low = false, high = false, inside = false;
  void add(int64_t x, uint64_t dim) {
    if (x < 0) low = true;
    else if (static_cast<uint64_t>(x) >= dim) high = true;
    else inside = true;
  }
  void progression(int64_t first, uint64_t count, uint64_t step, uint64_t dim) {
    for (uint64_t k = 0; k < count; ++k) add(first + static_cast<int64_t>(k * step), dim);
  }
  OobKind kind() const {
    if (!inside) return OobKind::outside;
    if (low && high) return OobKind::both;
    if (low) return OobKind::low;
    if (high) return OobKind::high;
    return OobKind::none;
  }
};

uint64_t ceil_div(uint64_t a, uint64_t b) { return b ? (a + b - 1) / b : 0; }

}  // namespace

std::string to_string(OobKind k) { return kOobNames[static_cast<int>(k)]; }

std::array<OobKind, kMaxRank> oob_kinds(const TensorMap& m, const TmaOp& op) {
  std::array<OobKind, kMaxRank> out{};
  if (m.rank < 1 || m.rank > kMaxRank) return out;
  std::array<Touch, kMaxRank> t{};
  const int n_dim = m.rank - 1;
  if (m.mode == TensorMode::tiled || m.mode == TensorMode::gather4) {
    if (m.interleave != Interleave::none) {
      const uint64_t step = std::max<uint32_t>(1, m.element_strides[0]);
      t[0].progression(op.coords[0], ceil_div(m.box[0], step), step, m.dims[0]);
    } else {
      t[0].progression(op.coords[0], m.box[0], 1, m.dims[0]);
    }
    if (m.mode == TensorMode::gather4) {
      for (int i = 1; i <= 4; ++i) t[1].add(op.coords[i], m.rank > 1 ? m.dims[1] : 1);
    } else {
      for (int i = 1; i < m.rank; ++i) {
        const uint64_t step = std::max<uint32_t>(1, m.element_strides[i]);
        const bool frozen = m.interleave != Interleave::none && i == m.rank - 2;
        t[i].progression(op.coords[i], frozen ? 1 : ceil_div(m.box[i], step), step, m.dims[i]);
      }
    }
  } else if (m.mode == TensorMode::im2col && m.rank >= 3) {
    t[0].progression(op.coords[0], m.channels_per_pixel, 1, m.dims[0]);
    const int nsp = m.rank - 2;
    std::array<int64_t, 3> pos{};
    for (int s = 0; s < nsp; ++s) pos[s] = op.coords[s + 1];
    int64_t n = op.coords[n_dim];
    for (uint32_t pix = 0; pix < m.pixels_per_column; ++pix) {
      for (int s = 0; s < nsp; ++s) t[s + 1].add(pos[s] + op.im2col_offsets[s], m.dims[s + 1]);
      t[n_dim].add(n, m.dims[n_dim]);
      int s = 0;
      for (; s < nsp; ++s) {
        pos[s] += m.element_strides[s + 1];
        if (pos[s] <= static_cast<int64_t>(m.dims[s + 1]) - 1 + m.upper_corner[s]) break;
        pos[s] = m.lower_corner[s];
      }
      if (s == nsp) n += m.element_strides[n_dim];
    }
  } else if (wide_mode(m.mode) && m.rank >= 3) {
    t[0].progression(op.coords[0], m.channels_per_pixel, 1, m.dims[0]);
    for (int i = 2; i < n_dim; ++i) t[i].add(op.coords[i], m.dims[i]);  // H, D stay put
    const int64_t lo = static_cast<int64_t>(m.lower_corner[0]) + op.w_offset;
    const int64_t hi = static_cast<int64_t>(m.dims[1]) - 1 + m.upper_corner[0] + op.w_offset;
    const int64_t step = m.element_strides[1];
    const bool w128 = m.mode == TensorMode::im2col_w128;
    int64_t w = static_cast<int64_t>(op.coords[1]) + op.w_offset, n = op.coords[n_dim];
    for (uint32_t g = 0; g < (w128 ? 4u : 1u); ++g) {
      int64_t last_w = w, last_n = n;
      for (uint32_t i = 0; i < (w128 ? 32u : m.pixels_per_column); ++i) {
        t[1].add(w, m.dims[1]);
        t[n_dim].add(n, m.dims[n_dim]);
        last_w = w;
        last_n = n;
        w += step;
        if (w > hi) {
          w = lo;
          n += m.element_strides[n_dim];
        }
      }
      for (uint32_t h = 1; h <= op.w_halo; ++h) {
        t[1].add(last_w + static_cast<int64_t>(h) * step, m.dims[1]);
        t[n_dim].add(last_n, m.dims[n_dim]);
      }
    }
  }
  for (int i = 0; i < m.rank; ++i) out[i] = t[i].kind();
  return out;
}

OobKind oob_aggregate(const std::array<OobKind, kMaxRank>& kinds, int rank) {
  bool low = false, high = false, both = false;
  for (int i = 0; i < std::min(rank, kMaxRank); ++i) {
    switch (kinds[i]) {
      case OobKind::outside: return OobKind::outside;
      case OobKind::both: both = true; break;
      case OobKind::low: low = true; break;
      case OobKind::high: high = true; break;
      case OobKind::none: break;
    }
  }
  if (both || (low && high)) return OobKind::both;
  if (low) return OobKind::low;
  if (high) return OobKind::high;
  return OobKind::none;
}

namespace {

// ---------------------------------------------------------------- what is possible by construction

// The swizzles the encoder takes for the type and mode (descriptor_validation.cpp's lists).
bool swizzle_possible(const std::string& sw, DataType t, TensorMode mode) {
  if (wide_mode(mode) && sw != "64B" && sw != "128B" && sw != "128B_atom_32B") return false;
  if (t == DataType::b4x16_p64) return sw == "none" || sw == "128B" || sw == "128B_atom_32B";
  if (t == DataType::b6x16_p32) {
    if (sw == "128B_atom_64B") return mode == TensorMode::tiled || mode == TensorMode::gather4;  // store-only: no im2col store
    return sw == "none" || sw == "128B" || sw == "128B_atom_32B";
  }
  return true;
}

bool rank_mode_interleave_possible(int rank, TensorMode mode, Interleave il) {
  switch (mode) {
    case TensorMode::tiled: return il == Interleave::none || rank >= 3;
    case TensorMode::gather4: return rank == 2 && il == Interleave::none;
    default: return rank >= 3 && il == Interleave::none;  // im2col family: no interleave generated / accepted
  }
}

std::string op_axis(const TmaOp& op) { return op_name(op); }

std::vector<std::string> op_axis_names() {
  std::vector<std::string> v = {"load", "store", "prefetch"};
  for (int r = 0; r < 8; ++r) v.push_back("reduce_" + to_string(static_cast<ReduceOp>(r)));
  return v;
}

std::string join(std::initializer_list<std::string> parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "/") + p;
  return out;
}

std::string phase_name(uint32_t smem_addr) {
  return smem_addr % 128 ? "misaligned" : std::to_string((smem_addr / 128) % 8);
}

// ---------------------------------------------------------------- JSON

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

void write_bins(std::ostringstream& o, const std::map<std::string, CoverageBins>& sections) {
  o << "{";
  bool first_section = true;
  for (const auto& [name, bins] : sections) {
    o << (first_section ? "\n" : ",\n") << "    " << quote(name) << ": {";
    first_section = false;
    bool first = true;
    for (const auto& [bin, hits] : bins) {
      o << (first ? "\n" : ",\n") << "      " << quote(bin) << ": " << hits;
      first = false;
    }
    o << (bins.empty() ? "}" : "\n    }");
  }
  o << (sections.empty() ? "}" : "\n  }");
}

// A small JSON reader for what to_json writes: objects, arrays, strings and non-negative integers.
class JsonReader {
 public:
  explicit JsonReader(const std::string& text) : s_(text) {}

  CoverageDb read() {
    CoverageDb db;
    bool schema_seen = false;
    object([&](const std::string& key) {
      if (key == "schema") {
        if (string() != kSchema) fail("schema is not " + std::string(kSchema));
        schema_seen = true;
      } else if (key == "profiles") {
        array([&] { db.profiles.insert(string()); });
      } else if (key == "cases") {
        db.cases = number();
      } else if (key == "groups" || key == "crosses") {
        auto& sections = key == "groups" ? db.groups : db.crosses;
        object([&](const std::string& name) {
          CoverageBins& bins = sections[name];
          object([&](const std::string& bin) { bins[bin] += number(); });
        });
      } else {
        fail("unknown key '" + key + "'");
      }
    });
    skip_ws();
    if (pos_ != s_.size()) fail("text after the object");
    if (!schema_seen) fail("no schema");
    return db;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw std::runtime_error("coverage JSON, byte " + std::to_string(pos_) + ": " + why);
  }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t')) ++pos_;
  }
  void expect(char c) {
    skip_ws();
    if (pos_ >= s_.size() || s_[pos_] != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  bool peek(char c) {
    skip_ws();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      if (s_[pos_] == '\\') {
        if (++pos_ >= s_.size()) break;
        const char e = s_[pos_];
        if (e != '"' && e != '\\' && e != '/') fail("unsupported escape");
      }
      out += s_[pos_++];
    }
    if (pos_ >= s_.size()) fail("unterminated string");
    ++pos_;
    return out;
  }
  uint64_t number() {
    skip_ws();
    if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9') fail("expected a non-negative integer");
    uint64_t v = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      const uint64_t d = static_cast<uint64_t>(s_[pos_++] - '0');
      if (v > (UINT64_MAX - d) / 10) fail("integer too large");
      v = v * 10 + d;
    }
    return v;
  }
  template <typename F>
  void object(F&& member) {
    expect('{');
    if (peek('}')) {
      ++pos_;
      return;
    }
    for (;;) {
      const std::string key = string();
      expect(':');
      member(key);
      if (peek(',')) {
        ++pos_;
        continue;
      }
      expect('}');
      return;
    }
  }
  template <typename F>
  void array(F&& element) {
    expect('[');
    if (peek(']')) {
      ++pos_;
      return;
    }
    for (;;) {
      element();
      if (peek(',')) {
        ++pos_;
        continue;
      }
      expect(']');
      return;
    }
  }

  const std::string& s_;
  size_t pos_ = 0;
};

std::string percent(uint64_t hit, uint64_t total) {
  if (!total) return "-";
  const uint64_t tenths = (hit * 1000 + total / 2) / total;
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + "%";
}

}  // namespace

void CoverageDb::declare(const RandomOptions& opt) {
  profiles.insert(random_profile(opt));
  const std::vector<TensorMode> modes = random_modes(opt);
  const std::vector<DataType> dtypes = random_dtypes(opt);
  const std::vector<std::string> swizzles = random_swizzles(opt);
  auto add = [](CoverageBins& bins, const std::string& bin) { bins.emplace(bin, 0); };

  for (TensorMode m : modes) add(groups["mode"], to_string(m));
  for (DataType t : dtypes) add(groups["dtype"], to_string(t));
  for (int r = 1; r <= kMaxRank; ++r) add(groups["rank"], std::to_string(r));
  for (const std::string& s : swizzles) add(groups["swizzle"], s);
  for (const char* i : {"none", "16B", "32B"}) add(groups["interleave"], i);
  for (const char* p : {"none", "64B", "128B", "256B"}) add(groups["l2_promotion"], p);
  for (const char* f : {"zero", "nan"}) add(groups["oob_fill"], f);
  for (const char* k : {"load", "store", "reduce", "prefetch"}) add(groups["op_kind"], k);
  for (int r = 0; r < 8; ++r) add(groups["reduce_op"], to_string(static_cast<ReduceOp>(r)));
  for (int i = 0; i < kMaxRank; ++i) add(groups["element_stride_gt1"], "dim" + std::to_string(i));
  for (int i = 0; i < kMaxRank; ++i)
    for (const std::string& k : kOobNames) add(groups["oob"], "dim" + std::to_string(i) + ":" + k);
  for (int p = 0; p < 8; ++p) add(groups["smem_phase"], std::to_string(p));
  add(groups["smem_phase"], "misaligned");
  for (const char* o : {"ok", "encode_error", "fault"}) add(groups["outcome"], o);
  for (const std::string& r : random_validation_rules(opt)) add(groups["validation_rule"], r);
  for (const std::string& f : random_fault_kinds(opt)) add(groups["fault_kind"], f);
  for (const char* e : {"huge_dim", "max_dim", "huge_stride", "far_coord"}) add(groups["extremes"], e);

  for (const std::string& sw : swizzles)
    for (DataType t : dtypes)
      for (TensorMode m : modes)
        if (swizzle_possible(sw, t, m))
          for (const std::string& k : kOobNames) {
            // b6x16_p32 with 128B_atom_64B is store-only, and stores take no negative coordinate
            if (t == DataType::b6x16_p32 && sw == "128B_atom_64B" && (k == "low" || k == "both")) continue;
            add(crosses[kSwizzleDtypeModeOob], join({sw, to_string(t), to_string(m), k}));
          }
  for (const std::string& op : op_axis_names())
    for (DataType t : dtypes) add(crosses[kOpDtype], join({op, to_string(t)}));
  for (int r = 1; r <= kMaxRank; ++r)
    for (TensorMode m : modes)
      for (Interleave il : {Interleave::none, Interleave::b16, Interleave::b32})
        if (rank_mode_interleave_possible(r, m, il))
          add(crosses[kRankModeInterleave], join({std::to_string(r), to_string(m), to_string(il)}));
  for (const std::string& r : random_validation_rules(opt))
    for (TensorMode m : random_rule_modes(r, opt)) add(crosses[kRuleMode], join({r, to_string(m)}));
  for (const std::string& sw : swizzles)
    for (int p = 0; p < 8; ++p) add(crosses[kSwizzlePhase], join({sw, std::to_string(p)}));
  for (const char* f : {"zero", "nan"})
    for (DataType t : dtypes)
      if (std::string(f) == "zero" || is_float(t)) add(crosses[kFillDtype], join({f, to_string(t)}));
}

void CoverageDb::sample(const GoldenCase& c, const std::string& intent) {
  ++cases;
  const TensorMap& m = c.map;
  const TmaOp& op = c.op;
  auto hit = [](CoverageBins& bins, const std::string& bin) { ++bins[bin]; };
  hit(groups["outcome"], to_string(c.outcome));
  if (const auto err = validate_tensor_map(m, c.arch)) {
    hit(groups["validation_rule"], err->rule);
    hit(crosses[kRuleMode], join({err->rule, to_string(m.mode)}));
    return;
  }
  // The descriptor is accepted: its fields are valid enum values and the rank is 1..5.
  const std::string sw = swizzle_name(m.swizzle, m.swizzle_atom);
  hit(groups["mode"], to_string(m.mode));
  hit(groups["dtype"], to_string(m.dtype));
  hit(groups["rank"], std::to_string(m.rank));
  hit(groups["swizzle"], sw);
  hit(groups["interleave"], to_string(m.interleave));
  hit(groups["l2_promotion"], to_string(m.l2_promotion));
  hit(groups["oob_fill"], to_string(m.oob_fill));
  const char* kinds[] = {"load", "store", "reduce", "prefetch"};
  hit(groups["op_kind"], kinds[static_cast<int>(op.kind)]);
  if (op.kind == OpKind::reduce) hit(groups["reduce_op"], to_string(op.reduce));
  for (int i = 0; i < m.rank; ++i)
    if (m.element_strides[i] > 1) hit(groups["element_stride_gt1"], "dim" + std::to_string(i));
  if (op.kind != OpKind::prefetch) hit(groups["smem_phase"], phase_name(op.smem_addr));
  if (intent.rfind("fault:", 0) == 0 && c.outcome == Outcome::fault) hit(groups["fault_kind"], intent.substr(6));
  hit(crosses[kOpDtype], join({op_axis(op), to_string(m.dtype)}));
  hit(crosses[kRankModeInterleave], join({std::to_string(m.rank), to_string(m.mode), to_string(m.interleave)}));
  if (c.outcome != Outcome::ok || op.kind == OpKind::prefetch) return;
  // The operation moved data: where its box lay.
  for (int i = 0; i < m.rank; ++i) {
    if (m.dims[i] >= (uint64_t{1} << 31)) hit(groups["extremes"], m.dims[i] == (uint64_t{1} << 32) - 1 ? "max_dim" : "huge_dim");
    if (i >= 1 && m.strides[i - 1] >= (uint64_t{1} << 39)) hit(groups["extremes"], "huge_stride");
  }
  for (int i = 0; i < (m.mode == TensorMode::gather4 ? 5 : m.rank); ++i)
    if (op.coords[i] >= (1 << 30) || op.coords[i] <= -(1 << 30)) {
      hit(groups["extremes"], "far_coord");
      break;
    }
  const std::array<OobKind, kMaxRank> k = oob_kinds(m, op);
  for (int i = 0; i < m.rank; ++i) hit(groups["oob"], "dim" + std::to_string(i) + ":" + to_string(k[i]));
  const OobKind agg = oob_aggregate(k, m.rank);
  hit(crosses[kSwizzleDtypeModeOob], join({sw, to_string(m.dtype), to_string(m.mode), to_string(agg)}));
  if (op.kind == OpKind::load) {
    hit(crosses[kSwizzlePhase], join({sw, phase_name(op.smem_addr)}));
    if (agg != OobKind::none) hit(crosses[kFillDtype], join({to_string(m.oob_fill), to_string(m.dtype)}));
  }
}

void CoverageDb::merge(const CoverageDb& other) {
  profiles.insert(other.profiles.begin(), other.profiles.end());
  cases += other.cases;
  for (const auto& [name, bins] : other.groups)
    for (const auto& [bin, hits] : bins) groups[name][bin] += hits;
  for (const auto& [name, bins] : other.crosses)
    for (const auto& [bin, hits] : bins) crosses[name][bin] += hits;
}

std::string CoverageDb::to_json() const {
  std::ostringstream o;
  o << "{\n  \"schema\": " << quote(kSchema) << ",\n  \"profiles\": [";
  bool first = true;
  for (const std::string& p : profiles) {
    o << (first ? "" : ", ") << quote(p);
    first = false;
  }
  o << "],\n  \"cases\": " << cases << ",\n  \"groups\": ";
  write_bins(o, groups);
  o << ",\n  \"crosses\": ";
  write_bins(o, crosses);
  o << "\n}\n";
  return o.str();
}

CoverageDb CoverageDb::from_json(const std::string& text) { return JsonReader(text).read(); }

std::string CoverageDb::report(size_t max_holes) const {
  std::ostringstream o;
  std::string names;
  for (const std::string& p : profiles) names += (names.empty() ? "" : ", ") + p;
  o << "coverage of " << cases << " cases (profiles: " << (names.empty() ? "none" : names) << ")\n";
  uint64_t all_hit = 0, all_total = 0;
  auto section = [&](const char* title, const std::map<std::string, CoverageBins>& sections) {
    o << title << "\n";
    for (const auto& [name, bins] : sections) {
      uint64_t hit = 0;
      for (const auto& b : bins) hit += b.second ? 1 : 0;
      all_hit += hit;
      all_total += bins.size();
      char line[160];
      std::snprintf(line, sizeof line, "  %-34s %5llu/%-5llu %7s\n", name.c_str(), static_cast<unsigned long long>(hit),
                    static_cast<unsigned long long>(bins.size()), percent(hit, bins.size()).c_str());
      o << line;
    }
  };
  section("groups                              hit/total", groups);
  section("crosses", crosses);
  char line[160];
  std::snprintf(line, sizeof line, "  %-34s %5llu/%-5llu %7s\n", "all bins", static_cast<unsigned long long>(all_hit),
                static_cast<unsigned long long>(all_total), percent(all_hit, all_total).c_str());
  o << line << "holes (bins never hit)\n";
  bool any = false;
  auto holes = [&](const std::map<std::string, CoverageBins>& sections) {
    for (const auto& [name, bins] : sections) {
      std::vector<std::string> missing;
      for (const auto& [bin, hits] : bins)
        if (!hits) missing.push_back(bin);
      if (missing.empty()) continue;
      any = true;
      o << "  " << name << " (" << missing.size() << "):";
      const size_t shown = max_holes ? std::min(max_holes, missing.size()) : missing.size();
      for (size_t i = 0; i < shown; ++i) o << (i ? ", " : " ") << missing[i];
      if (shown < missing.size()) o << ", ... and " << (missing.size() - shown) << " more";
      o << "\n";
    }
  };
  holes(groups);
  holes(crosses);
  if (!any) o << "  none\n";
  return o.str();
}

CoverageDb load_coverage(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return CoverageDb::from_json(text.str());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

void save_coverage(const CoverageDb& db, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  const std::string json = db.to_json();
  out.write(json.data(), static_cast<std::streamsize>(json.size()));
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
}

}  // namespace tma
