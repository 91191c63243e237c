#include "tma/scenario/trace.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "tma/config/paths.h"
#include "tma/config/yaml_reader.h"

namespace tma {

namespace {

// ---- writing: JSON by hand (flat objects of numbers, strings and lists) ----

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

template <typename T>
std::string list(const T& values, size_t n) {
  std::string out = "[";
  for (size_t i = 0; i < n; ++i) out += (i ? "," : "") + std::to_string(values[i]);
  return out + "]";
}

// One JSON object, its fields in the order they are added.
class Obj {
 public:
  Obj& raw(const std::string& key, const std::string& json) {
    text_ += (text_.empty() ? "{" : ",") + quote(key) + ":" + json;
    return *this;
  }
  Obj& str(const std::string& key, const std::string& v) { return raw(key, quote(v)); }
  Obj& num(const std::string& key, int64_t v) { return raw(key, std::to_string(v)); }
  std::string text() const { return text_.empty() ? "{}" : text_ + "}"; }

 private:
  std::string text_;
};

const char* location(const ScenarioDescriptor& d) { return d.kernel_param ? "param" : "global"; }

// The scenario's tensors and descriptors as a scenario file writes them (descriptors in the order
// of their addresses, so that a reader gives each the same address again).
std::string scenario_json(const Scenario& s, const std::string& arch_path) {
  Obj o;
  o.str("name", s.name);
  if (!s.description.empty()) o.str("description", s.description);
  o.num("sms", s.sms).num("cluster_size", s.cluster_size).str("gpu", to_string(s.gpu));
  o.str("memory_fill", s.memory_fill == MemoryFill::zero ? "zero" : "word_hash");
  o.str("arch", arch_path).str("l2_state", to_string(s.l2_state));
  if (s.l2_dirty_bytes) o.num("l2_dirty_bytes", static_cast<int64_t>(s.l2_dirty_bytes));
  Obj tensors;
  for (const auto& [name, t] : s.tensors) {
    Obj j;
    j.str("dtype", to_string(t.dtype)).raw("dims", list(t.dims, t.dims.size()));
    if (!t.strides.empty()) j.raw("strides", list(t.strides, t.strides.size()));
    j.num("address", static_cast<int64_t>(t.address));
    tensors.raw(name, j.text());
  }
  o.raw("tensors", tensors.text());
  std::map<uint64_t, const ScenarioDescriptor*> by_address;
  for (const auto& [name, d] : s.descriptors) by_address[d.address] = &d;
  Obj descs;
  for (const auto& [address, d] : by_address) {
    const TensorMap& m = d->map;
    const size_t r = static_cast<size_t>(m.rank);
    Obj j;
    j.str("tensor", d->tensor).str("mode", to_string(m.mode));
    if (m.mode == TensorMode::tiled || m.mode == TensorMode::gather4) j.raw("box", list(m.box, r));
    j.raw("element_strides", list(m.element_strides, r)).str("interleave", to_string(m.interleave));
    j.str("swizzle", swizzle_name(m.swizzle, m.swizzle_atom)).str("l2_promotion", to_string(m.l2_promotion));
    j.str("oob_fill", to_string(m.oob_fill)).str("location", location(*d));
    if (m.mode == TensorMode::im2col || m.mode == TensorMode::im2col_w || m.mode == TensorMode::im2col_w128) {
      const size_t nsp = m.mode == TensorMode::im2col ? r - 2 : 1;
      j.raw("lower_corner", list(m.lower_corner, nsp)).raw("upper_corner", list(m.upper_corner, nsp));
      j.num("channels_per_pixel", m.channels_per_pixel).num("pixels_per_column", m.pixels_per_column);
    }
    descs.raw(d->name, j.text());
  }
  o.raw("descriptors", descs.text());
  return o.text();
}

std::string swizzle_of(const TileRead& t) { return swizzle_name(t.swizzle, t.atom); }

// The fields every line of a step repeats: what the step waits for and does.
void step_fields(Obj& o, const Step& st, size_t i, uint32_t stages) {
  o.num("stage", static_cast<int64_t>(i % stages)).num("phase", static_cast<int64_t>(i / stages));
  o.num("expects", st.expected_completions).num("compute_cycles", st.compute_cycles);
  if (st.bulk_wait_pending != kNoBulkWait) o.num("bulk_wait", st.bulk_wait_pending);
  if (st.bulk_wait_after) o.raw("wait_all", "true");
  if (!st.reads.empty()) {
    std::string reads = "[";
    for (size_t k = 0; k < st.reads.size(); ++k) {
      const TileRead& t = st.reads[k];
      Obj r;
      r.num("smem_addr", t.smem_addr).num("rows", t.rows).num("row_bytes", t.row_bytes).num("pitch", t.pitch);
      r.str("swizzle", swizzle_of(t));
      reads += (k ? "," : "") + r.text();
    }
    o.raw("reads", reads + "]");
  }
}

std::string op_text(const IssueOp& io) {
  if (io.cmd.kind == UnitCommandKind::prefetch_descriptor) return "prefetch_descriptor";
  if (io.cmd.kind == UnitCommandKind::invalidate_descriptor) return "invalidate_descriptor";
  return op_name(io.cmd.op);
}

void op_fields(Obj& o, const IssueOp& io, const std::map<uint64_t, const ScenarioDescriptor*>& by_address) {
  const ScenarioDescriptor& d = *by_address.at(io.cmd.descriptor_address);
  o.str("op", op_text(io)).str("descriptor", d.name);
  if (io.cmd.kind != UnitCommandKind::tensor_op) return;
  const TensorMap& m = d.map;
  o.raw("coords", list(io.cmd.op.coords, static_cast<size_t>(m.rank)));
  if (m.mode == TensorMode::im2col)
    o.raw("im2col_offsets", list(io.cmd.op.im2col_offsets, static_cast<size_t>(m.rank - 2)));
  if (m.mode == TensorMode::im2col_w || m.mode == TensorMode::im2col_w128)
    o.num("w_halo", io.cmd.op.w_halo).num("w_offset", io.cmd.op.w_offset);
  o.num("smem_addr", io.cmd.op.smem_addr);
  if (io.cmd.cta_mask) o.num("cta_mask", io.cmd.cta_mask);
}

std::string relative_to_project(const std::string& path) {
  const std::string root = project_root() + "/";
  return path.rfind(root, 0) == 0 ? path.substr(root.size()) : path;
}

// ---- reading ----

// A step's fields that every one of its lines repeats, to check that they agree.
struct StepFields {
  uint32_t expects = 0, compute = 0, bulk_wait = kNoBulkWait;
  bool wait_all = false;
  std::vector<TileRead> reads;
  bool operator==(const StepFields& o) const {
    if (expects != o.expects || compute != o.compute || bulk_wait != o.bulk_wait || wait_all != o.wait_all ||
        reads.size() != o.reads.size())
      return false;
    for (size_t i = 0; i < reads.size(); ++i) {
      const TileRead &a = reads[i], &b = o.reads[i];
      if (a.smem_addr != b.smem_addr || a.rows != b.rows || a.row_bytes != b.row_bytes || a.pitch != b.pitch ||
          a.swizzle != b.swizzle || a.atom != b.atom)
        return false;
    }
    return true;
  }
};

StepFields read_step_fields(const YamlField& n) {
  StepFields f;
  f.expects = static_cast<uint32_t>(n["expects"].as_uint64(0, 1u << 20));
  f.compute = static_cast<uint32_t>(n["compute_cycles"].as_uint64(0, 1u << 30));
  if (!n["bulk_wait"].is_null()) f.bulk_wait = static_cast<uint32_t>(n["bulk_wait"].as_uint64(0, 1u << 20));
  f.wait_all = n["wait_all"].as_bool_or(false);
  const YamlField reads = n["reads"];
  if (!reads.is_null() && !reads.is_list()) throw reads.error("expected a list of tile reads");
  for (size_t i = 0; i < reads.size(); ++i) {
    const YamlField r = reads.at(i);
    r.check_keys({"smem_addr", "rows", "row_bytes", "pitch", "swizzle"});
    TileRead t;
    t.smem_addr = static_cast<uint32_t>(r["smem_addr"].as_uint64(0, 1u << 24));
    t.rows = static_cast<uint32_t>(r["rows"].as_uint64(1, 1u << 16));
    t.row_bytes = static_cast<uint32_t>(r["row_bytes"].as_uint64(16, 1u << 16));
    t.pitch = static_cast<uint32_t>(r["pitch"].as_uint64(1, 1u << 16));
    const std::string sw = r["swizzle"].as_string();
    if (!parse_swizzle_name(sw, t.swizzle, t.atom))
      throw r["swizzle"].error("expected one of: " + swizzle_names() + "; got '" + sw + "'");
    f.reads.push_back(t);
  }
  return f;
}

IssueOp read_op(const YamlField& n, const Scenario& s, const std::string& op) {
  IssueOp io;
  const std::string name = n["descriptor"].as_string();
  const auto it = s.descriptors.find(name);
  if (it == s.descriptors.end()) throw n["descriptor"].error("no descriptor named '" + name + "'");
  const ScenarioDescriptor& d = it->second;
  io.cmd.descriptor_address = d.address;
  io.cmd.descriptor_in_param = d.kernel_param;
  if (op == "prefetch_descriptor" || op == "invalidate_descriptor") {
    io.cmd.kind = op == "prefetch_descriptor" ? UnitCommandKind::prefetch_descriptor
                                              : UnitCommandKind::invalidate_descriptor;
    return io;
  }
  io.cmd.kind = UnitCommandKind::tensor_op;
  if (!parse_op_name(op, io.cmd.op.kind, io.cmd.op.reduce))
    throw n["op"].error("expected one of: " + op_names() + ", prefetch_descriptor, invalidate_descriptor, none; got '" +
                        op + "'");
  const TensorMap& m = d.map;
  const auto c = n["coords"].as_int64_list(m.rank, m.rank, INT32_MIN, INT32_MAX);
  for (int j = 0; j < m.rank; ++j) io.cmd.op.coords[j] = static_cast<int32_t>(c[j]);
  if (m.mode == TensorMode::im2col) {
    const auto o = n["im2col_offsets"].as_int64_list(m.rank - 2, m.rank - 2, 0, 65535);
    for (int j = 0; j < m.rank - 2; ++j) io.cmd.op.im2col_offsets[j] = static_cast<uint16_t>(o[j]);
  }
  if (m.mode == TensorMode::im2col_w || m.mode == TensorMode::im2col_w128) {
    io.cmd.op.w_halo = static_cast<uint16_t>(n["w_halo"].as_uint64_or(0, 0, 65535));
    io.cmd.op.w_offset = static_cast<uint16_t>(n["w_offset"].as_uint64_or(0, 0, 65535));
  }
  io.cmd.op.smem_addr = static_cast<uint32_t>(n["smem_addr"].as_uint64(0, 1u << 24));
  if (!n["cta_mask"].is_null()) {
    const uint64_t all = (uint64_t{1} << s.cluster_size) - 1;
    io.cmd.cta_mask = static_cast<uint16_t>(n["cta_mask"].as_uint64(1, all));
    if (s.cluster_size < 2) throw n["cta_mask"].error("a multicast (cta_mask) needs the scenario's cluster_size >= 2");
  }
  return io;
}

// Reads one line as its own document, its errors moved to the line's number in the file.
template <typename F>
void with_line(const std::string& path, const std::string& text, int line, F&& f) {
  try {
    const YamlDoc doc = YamlDoc::parse(text, path);
    f(doc);
  } catch (const OverrideError&) {
    throw;  // has no line: the value is the override's
  } catch (const YamlError& e) {
    throw YamlError(e.file(), line, e.field(), e.problem());
  }
}

}  // namespace

bool is_trace_path(const std::string& path) {
  const std::string ext = ".jsonl";
  return path.size() >= ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
}

void write_trace(std::ostream& out, const Scenario& s, const Launch& launch, const std::string& arch_path) {
  Obj header;
  header.str("format", "tma-trace").num("version", kTraceVersion);
  header.raw("scenario", scenario_json(s, relative_to_project(arch_path)));
  header.num("stages", s.workload.stages).raw("grid", list(launch.sm, launch.sm.size()));
  // Several CTAs per SM: the slots, and where each slot's shared memory starts (the operations'
  // smem_addr are their CTA's own). Left out for one CTA per SM, as version 1 first wrote it.
  if (launch.ctas_per_sm > 1)
    header.num("ctas_per_sm", launch.ctas_per_sm).num("cta_smem_stride", launch.cta_smem_stride);
  if (launch.setup_cycles) header.num("setup_cycles", launch.setup_cycles);  // left out when 0, as version 1 first wrote it
  if (launch.issue_cycles) header.num("issue_cycles", launch.issue_cycles);  // the same
  if (launch.handoff_cycles) header.num("handoff_cycles", launch.handoff_cycles);
  if (launch.warps_per_cta > 1) header.num("warps_per_cta", launch.warps_per_cta);  // left out when 1
  out << header.text() << '\n';
  std::map<uint64_t, const ScenarioDescriptor*> by_address;
  for (const auto& [name, d] : s.descriptors) by_address[d.address] = &d;
  const uint32_t stages = s.workload.stages;
  for (size_t c = 0; c < launch.ctas.size(); ++c) {
    const CtaProgram& p = launch.ctas[c];
    // Every line starts with the CTA, its SM (null: the first SM free), its step (null: the
    // prologue) and which of the CTA's roles issues it.
    auto line = [&](int64_t step, const char* issue) {
      Obj o;
      o.num("cta", static_cast<int64_t>(c));
      if (launch.sm[c] == kAnySm) o.raw("sm", "null");
      else o.num("sm", launch.sm[c]);
      if (step < 0) o.raw("step", "null");
      else o.num("step", step);
      return o.str("issue", issue);
    };
    for (const IssueOp& io : p.prologue) {
      Obj o = line(-1, "prologue");
      op_fields(o, io, by_address);
      out << o.text() << '\n';
    }
    for (size_t i = 0; i < p.steps.size(); ++i) {
      const Step& st = p.steps[i];
      auto step_line = [&](const char* issue) { return line(static_cast<int64_t>(i), issue); };
      for (size_t j = 0; j < st.loads.size(); ++j) {
        Obj o = step_line("producer");
        op_fields(o, st.loads[j], by_address);
        o.str("wait", j >= st.release_wait_from ? "released" : "stage");
        step_fields(o, st, i, stages);
        out << o.text() << '\n';
      }
      for (const IssueOp& io : st.after) {
        Obj o = step_line("consumer");
        op_fields(o, io, by_address);
        step_fields(o, st, i, stages);
        out << o.text() << '\n';
      }
      if (st.loads.empty() && st.after.empty()) {
        Obj o = step_line("consumer");
        o.str("op", "none");
        step_fields(o, st, i, stages);
        out << o.text() << '\n';
      }
    }
  }
}

Trace load_trace(const std::string& path, const std::vector<std::string>& overrides) {
  std::ifstream in(path);
  if (!in) throw YamlError(path, 0, "", "cannot read the file");
  Trace t;
  std::string text;
  if (!std::getline(in, text)) throw YamlError(path, 0, "", "the file is empty: a trace starts with its header line");
  with_line(path, text, 1, [&](const YamlDoc& doc) {
    const YamlField h = doc.root();
    if (!h.is_map()) throw h.error("expected the header, a JSON object with format, version, scenario, stages, grid");
    h.check_keys({"format", "version", "scenario", "scenario_file", "stages", "grid", "ctas_per_sm", "cta_smem_stride",
                  "setup_cycles", "issue_cycles", "handoff_cycles", "warps_per_cta"});
    if (h["format"].as_string() != "tma-trace") throw h["format"].error("expected \"tma-trace\"");
    const int64_t version = h["version"].as_int64();
    if (version != kTraceVersion)
      throw h["version"].error("this tma-sim reads version " + std::to_string(kTraceVersion) + " traces, not version " +
                               std::to_string(version));
    if (h["scenario"].present() == h["scenario_file"].present())
      throw h.error(
          "give the tensors and descriptors in 'scenario', or a scenario file in 'scenario_file' (one of them)");
    if (h["scenario"].present()) {
      t.scenario = read_scenario_part(doc, "scenario", overrides);
    } else {
      // The file's workload is read (and must be valid) but not run: the trace's CTAs are.
      t.scenario = load_scenario(existing_yaml_path(h["scenario_file"]), overrides);
      t.scenario.workload = Workload();
      t.scenario.workload.kind = WorkloadKind::trace;
    }
    t.scenario.path = path;
    t.scenario.workload.stages = static_cast<uint32_t>(h["stages"].as_uint64(1, 64));
    const Scenario& s = t.scenario;
    const auto grid = h["grid"].as_int64_list(1, 1u << 24, kAnySm, static_cast<int64_t>(s.sms) - 1);
    for (const int64_t sm : grid) {
      if (sm == kAnySm && s.cluster_size > 1)
        throw h["grid"].error("CTAs for any SM (-1) need cluster_size 1: the waves of clusters are dealt to SMs");
      t.launch.sm.push_back(static_cast<int32_t>(sm));
    }
    t.launch.ctas.resize(grid.size());
    t.launch.setup_cycles = static_cast<uint32_t>(h["setup_cycles"].as_uint64_or(0, 0, 1u << 30));
    t.launch.issue_cycles = static_cast<uint32_t>(h["issue_cycles"].as_uint64_or(0, 0, 1u << 30));
    t.launch.handoff_cycles = static_cast<uint32_t>(h["handoff_cycles"].as_uint64_or(0, 0, 1u << 30));
    t.launch.warps_per_cta = static_cast<uint32_t>(h["warps_per_cta"].as_uint64_or(1, 1, 32));
    if (h["ctas_per_sm"].present()) {
      t.launch.ctas_per_sm = static_cast<uint32_t>(h["ctas_per_sm"].as_uint64(1, 255));
      if (t.launch.ctas_per_sm > 1 && !h["cta_smem_stride"].present())
        throw h["ctas_per_sm"].error("several CTAs per SM need 'cta_smem_stride': where each CTA slot's shared memory starts");
    }
    if (h["cta_smem_stride"].present()) {
      if (t.launch.ctas_per_sm < 2) throw h["cta_smem_stride"].error("'cta_smem_stride' goes with 'ctas_per_sm' of 2 or more");
      t.launch.cta_smem_stride = static_cast<uint32_t>(h["cta_smem_stride"].as_uint64(16, 1u << 24));
      t.launch.cta_smem_bytes = t.launch.cta_smem_stride;
    }
  });
  const Scenario& s = t.scenario;
  const uint32_t stages = s.workload.stages;
  std::vector<std::vector<StepFields>> fields(t.launch.ctas.size());  // each step's, as its first line said
  std::vector<std::vector<bool>> consumer_seen(t.launch.ctas.size());
  std::vector<std::vector<int>> first_line(t.launch.ctas.size());  // of each step
  // With several CTAs per SM an operation's shared memory is its CTA's slot's.
  auto check_in_slot = [&](const YamlField& n, const IssueOp& io) {
    if (t.launch.ctas_per_sm > 1 && io.cmd.op.smem_addr >= t.launch.cta_smem_stride)
      throw n["smem_addr"].error("smem_addr " + std::to_string(io.cmd.op.smem_addr) + " is outside its CTA's slot (cta_smem_stride " +
                                 std::to_string(t.launch.cta_smem_stride) + ")");
  };
  for (int line = 2; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    with_line(path, text, line, [&](const YamlDoc& doc) {
      const YamlField n = doc.root();
      if (!n.is_map()) throw n.error("expected an operation, a JSON object");
      n.check_keys({"cta", "sm", "step", "issue", "op", "descriptor", "coords", "im2col_offsets", "w_halo", "w_offset",
                    "smem_addr", "cta_mask", "wait", "stage", "phase", "expects", "compute_cycles", "bulk_wait",
                    "wait_all", "reads"});
      const size_t c = n["cta"].as_uint64(0, t.launch.ctas.size() - 1);
      const int32_t sm = t.launch.sm[c];
      if (n["sm"].is_null() != (sm == kAnySm) || (sm != kAnySm && n["sm"].as_int64() != sm))
        throw n["sm"].error("CTA " + std::to_string(c) + " runs on " +
                            (sm == kAnySm ? std::string("the first SM free (null)") : "SM " + std::to_string(sm)) +
                            " (the header's grid)");
      CtaProgram& p = t.launch.ctas[c];
      const std::string issue = n["issue"].as_string();
      const std::string op = n["op"].as_string();
      if (issue == "prologue") {
        if (!p.steps.empty()) throw n["issue"].error("a CTA's prologue comes before its steps");
        if (!n["step"].is_null()) throw n["step"].error("a prologue operation belongs to no step (null)");
        if (op == "load") throw n["op"].error("a prologue issues no loads (they belong to steps)");
        p.prologue.push_back(read_op(n, s, op));
        return;
      }
      if (issue != "producer" && issue != "consumer")
        throw n["issue"].error("expected one of: prologue, producer, consumer; got '" + issue + "'");
      const uint64_t i = n["step"].as_uint64(0, UINT32_MAX);
      if (i + 1 < p.steps.size() || i > p.steps.size())
        throw n["step"].error("a CTA's steps come in order, each one's lines together: CTA " + std::to_string(c) +
                              " has " + std::to_string(p.steps.size()) + " steps so far");
      if (n["stage"].as_uint64() != i % stages || n["phase"].as_uint64() != i / stages)
        throw n["stage"].error("step " + std::to_string(i) + " fills stage " + std::to_string(i % stages) + ", phase " +
                               std::to_string(i / stages) + " of the " + std::to_string(stages) + "-stage ring");
      const StepFields f = read_step_fields(n);
      if (i == p.steps.size()) {  // the step's first line
        Step st;
        st.expected_completions = f.expects;
        st.compute_cycles = f.compute;
        st.bulk_wait_pending = f.bulk_wait;
        st.bulk_wait_after = f.wait_all;
        st.reads = f.reads;
        p.steps.push_back(st);
        fields[c].push_back(f);
        consumer_seen[c].push_back(false);
        first_line[c].push_back(line);
      } else if (!(f == fields[c][i])) {
        throw n.error("step " + std::to_string(i) + " of CTA " + std::to_string(c) +
                      ": expects, compute_cycles, bulk_wait, wait_all and reads must be those of its first line");
      }
      Step& st = p.steps[i];
      const bool empty = st.loads.empty() && st.after.empty() && !consumer_seen[c][i];
      if (op == "none") {
        if (issue != "consumer" || !empty || i + 1 != p.steps.size())
          throw n["op"].error("'none' is the only line of a step that issues nothing (issue: consumer)");
        consumer_seen[c][i] = true;
        return;
      }
      if (consumer_seen[c][i] && st.loads.empty() && st.after.empty())
        throw n["op"].error("step " + std::to_string(i) + " has a 'none' line: it issues nothing");
      if (issue == "producer") {
        if (consumer_seen[c][i]) throw n["issue"].error("a step's producer lines come before its consumer lines");
        if (op != "load") throw n["op"].error("the producer issues loads into the step's stage; got '" + op + "'");
        const std::string wait = n["wait"].as_string();
        if (wait != "stage" && wait != "released")
          throw n["wait"].error("expected stage or released; got '" + wait + "'");
        if (wait == "released" && st.release_wait_from == kNoReleaseWait)
          st.release_wait_from = static_cast<uint32_t>(st.loads.size());
        if (wait == "stage" && st.release_wait_from != kNoReleaseWait)
          throw n["wait"].error("a load after one that waits for the released steps waits too ('released')");
        st.loads.push_back(read_op(n, s, op));
        check_in_slot(n, st.loads.back());
      } else {
        if (op == "load") throw n["op"].error("the consumer issues stores, reductions and prefetches, not loads");
        if (!n["wait"].is_null())
          throw n["wait"].error("'wait' is a producer line's (the consumer's are bulk_wait, wait_all)");
        consumer_seen[c][i] = true;
        st.after.push_back(read_op(n, s, op));
        check_in_slot(n, st.after.back());
      }
    });
  }
  // Each of a step's loads completes on its mbarrier (a multicast's on every CTA it reaches, so a
  // step may expect more than its own loads, never fewer).
  for (size_t c = 0; c < t.launch.ctas.size(); ++c)
    for (size_t i = 0; i < t.launch.ctas[c].steps.size(); ++i) {
      const Step& st = t.launch.ctas[c].steps[i];
      if (st.expected_completions < st.loads.size())
        throw YamlError(path, first_line[c][i], "expects",
                        "step " + std::to_string(i) + " of CTA " + std::to_string(c) + " expects " +
                            std::to_string(st.expected_completions) + " completions but issues " +
                            std::to_string(st.loads.size()) + " loads (each completes on the step's mbarrier)");
    }
  return t;
}

}  // namespace tma
