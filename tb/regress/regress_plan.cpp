#include "tma/regress/regress_plan.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <set>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

#include "tma/config/arch_config_yaml.h"
#include "tma/config/paths.h"
#include "tma/scenario/scenario.h"
#include "tma/scenario/workload.h"
#include "tma/config/yaml_reader.h"

namespace fs = std::filesystem;

namespace tma::regress {

namespace {

const char* kFormat = "tma-regress/1";

std::string abs_path(const std::string& p) { return fs::absolute(p).lexically_normal().string(); }

bool valid_name(const std::string& s) {
  if (s.empty() || s[0] == '.' || s.size() > 120) return false;
  for (unsigned char c : s)
    if (!std::isalnum(c) && c != '_' && c != '-' && c != '.') return false;
  return true;
}

std::string checked_name(const YamlField& f) {
  const std::string n = f.as_string();
  if (!valid_name(n))
    throw f.error("'" + n + "' is not a valid name: letters, digits, '_', '-' and '.' only (not first), at most 120");
  return n;
}

// A scalar as YAML text that reads back as the same scalar.
std::string render_scalar(const std::string& s) {
  const bool plain = !s.empty() && s.find_first_of(":#[]{},&*!|>'\"%@`\n\t") == std::string::npos &&
                     s.front() != ' ' && s.back() != ' ' && s.front() != '-' && s.front() != '?';
  if (plain) return s;
  // A leading '-' is fine for numbers.
  if (!s.empty() && s.front() == '-' && s.find_first_not_of("-0123456789.xXabcdefABCDEF") == std::string::npos) return s;
  return json_quote(s);
}

// A field's value as flow YAML, for "path=value" overrides. A scalar at the top is taken as it
// is written (as after '=' on the command line: "[64, 64]" is a list); scalars inside lists and
// mappings are quoted when they need it.
std::string render(const YamlField& f, bool top = true) {
  if (f.is_null()) return "~";
  if (f.is_list()) {
    std::string out = "[";
    for (size_t i = 0; i < f.size(); ++i) out += (i ? ", " : "") + render(f.at(i), false);
    return out + "]";
  }
  if (f.is_map()) {
    std::string out = "{";
    bool first = true;
    for (const std::string& k : f.keys()) {
      out += (first ? "" : ", ") + render_scalar(k) + ": " + render(f[k], false);
      first = false;
    }
    return out + "}";
  }
  return top ? f.as_string() : render_scalar(f.as_string());
}

// A "path=value" override and the field of the regression or sweep file that wrote it (an error
// it causes points there).
struct Override {
  std::string text;
  YamlField where;
};

// "set" / "arch_set": a list of "path=value" strings, or a mapping of paths to values.
std::vector<Override> read_located_overrides(const YamlField& f) {
  std::vector<Override> out;
  if (f.is_null()) return out;
  if (f.is_list()) {
    for (size_t i = 0; i < f.size(); ++i) {
      const YamlField e = f.at(i);
      const std::string s = e.as_string();
      const size_t eq = s.find('=');
      if (eq == std::string::npos || eq == 0) throw e.error("expected \"path=value\", got '" + s + "'");
      out.push_back({s, e});
    }
    return out;
  }
  if (f.is_map()) {
    for (const std::string& k : f.keys()) {
      if (k.empty() || k.find('=') != std::string::npos) throw f[k].error("expected a field path as the key");
      out.push_back({k + "=" + render(f[k]), f[k]});
    }
    return out;
  }
  throw f.error("expected a list of \"path=value\" strings or a mapping of paths to values");
}

std::vector<std::string> texts(const std::vector<Override>& overrides) {
  std::vector<std::string> out;
  for (const Override& o : overrides) out.push_back(o.text);
  return out;
}

std::vector<std::string> read_overrides(const YamlField& f) { return texts(read_located_overrides(f)); }

// A job's scenario with its overrides, loaded as `tma-sim run` will load it: a bad scenario or
// override stops the whole file before anything runs, instead of failing its jobs one by one. An
// error an override caused points at the line that wrote it, any other at `where`; `point` names
// a sweep point.
Scenario load_job_scenario(const std::string& scenario, const std::vector<Override>& sets, const YamlField& where,
                           const std::string& point) {
  const std::string in = point.empty() ? "" : "point " + point + ": ";
  try {
    return load_scenario(scenario, texts(sets));
  } catch (const OverrideError& e) {
    const Override& o = sets[e.index()];
    throw o.where.error(in + "override '" + o.text + "': scenario " + scenario + ", field '" + e.field() +
                        "': " + e.cause());
  } catch (const YamlError& e) {
    throw where.error(in + "scenario " + e.what());
  }
}

// The scenario's programs on its architecture (shared memory for its stages...), as the run
// builds them first.
void check_fits(const Scenario& s, const ArchConfig& arch, const YamlField& where, const std::string& point) {
  try {
    build_programs(s, arch);
  } catch (const std::exception& e) {
    throw where.error((point.empty() ? "" : "point " + point + ": ") + "scenario " + s.path + " on architecture '" +
                      arch.name + "': " + e.what());
  }
}

std::vector<std::string> read_string_list(const YamlField& f) {
  std::vector<std::string> out;
  if (f.is_null()) return out;
  if (f.is_scalar()) return {f.as_string()};
  if (!f.is_list()) throw f.error("expected a list of strings");
  for (size_t i = 0; i < f.size(); ++i) out.push_back(f.at(i).as_string());
  return out;
}

std::string padded(uint64_t k, uint64_t count) {
  int width = 1;
  for (uint64_t c = count > 0 ? count - 1 : 0; c >= 10; c /= 10) ++width;
  std::string s = std::to_string(k);
  return s.size() < static_cast<size_t>(width) ? std::string(static_cast<size_t>(width) - s.size(), '0') + s : s;
}

std::string source_of(const YamlField& f) { return f.file() + ":" + std::to_string(f.line()); }

// Loads an architecture, applies overrides (an error names the field that asked for them) and
// records the resolved file in the plan; returns its run-folder-relative path.
class ArchResolver {
 public:
  explicit ArchResolver(Plan& plan) : plan_(plan) {}

  std::string resolve(const std::string& file, const std::vector<std::string>& sets, const YamlField& where) {
    std::error_code ec;
    if (!fs::exists(file, ec)) throw where.error("no such architecture file: '" + file + "'");
    auto it = cache_.find(file);
    if (it == cache_.end()) it = cache_.emplace(file, load_arch_config(file)).first;
    ArchConfig a = it->second;
    try {
      apply_arch_overrides(a, sets);
    } catch (const std::exception& e) {
      throw where.error(e.what());
    }
    std::string key = file_safe(fs::path(file).stem().string());
    if (!sets.empty()) {
      std::string all;
      for (const std::string& s : sets) all += s + "\n";
      char h[16];
      std::snprintf(h, sizeof h, "-%08llx", static_cast<unsigned long long>(fnv1a64(file + "\n" + all) & 0xffffffffull));
      key += h;
    }
    const std::string rel = "arch/" + key + ".yaml";
    std::string text = "# Resolved architecture: " + file + "\n";
    for (const std::string& s : sets) text += "#   --arch-set " + s + "\n";
    text += "name: " + render_scalar(a.name) + "\n";
    std::string section;
    for (const auto& [path, value] : arch_fields(a)) {
      const size_t dot = path.find('.');
      if (dot == std::string::npos) {
        text += path + ": " + value + "\n";
        continue;
      }
      const std::string sec = path.substr(0, dot);
      if (sec != section) text += sec + ":\n";
      section = sec;
      text += "  " + path.substr(dot + 1) + ": " + value + "\n";
    }
    plan_.arch_files[rel] = text;
    resolved_[rel] = a;
    return rel;
  }

  // The architecture resolve() returned `rel` for.
  const ArchConfig& config(const std::string& rel) const { return resolved_.at(rel); }

 private:
  Plan& plan_;
  std::map<std::string, ArchConfig> cache_, resolved_;
};

struct Defaults {
  double timeout = 600;
  std::string arch;  // absolute, or ""
  std::vector<std::string> arch_set;
};

void add_arch_args(std::vector<std::string>& args, const std::string& arch, const std::vector<std::string>& sets) {
  args.push_back("--arch");
  args.push_back(arch);
  for (const std::string& s : sets) {
    args.push_back("--arch-set");
    args.push_back(s);
  }
}

const std::set<std::string> kSelftestModes = {"pass", "fail", "error", "crash", "abort", "hang"};

void read_entry(const YamlField& e, const Defaults& d, std::optional<uint64_t> run_seed, ArchResolver& arches,
                std::vector<Job>& out) {
  e.check_keys({"name", "description", "golden", "scenario", "random", "selftest", "engine", "set", "arch",
                "arch_set", "timeout", "args"});
  const std::string name = checked_name(e["name"]);
  std::vector<std::string> kinds;
  for (const char* k : {"golden", "scenario", "random", "selftest"})
    if (e[k].present()) kinds.push_back(k);
  if (kinds.size() != 1)
    throw e.error("test '" + name + "' needs exactly one of: golden, scenario, random, selftest");
  const std::string kind = kinds[0];
  if (e["set"].present() && kind != "scenario") throw e["set"].error("only scenario tests take 'set'");
  if (e["engine"].present() && kind != "golden" && kind != "random")
    throw e["engine"].error("only golden and random tests take 'engine'");

  Job base;
  base.kind = kind;
  base.source = source_of(e);
  base.timeout_s = e["timeout"].as_double_or(d.timeout, 0.001, 1e7);
  const std::vector<std::string> extra = read_string_list(e["args"]);
  const bool own_arch = e["arch"].present() || e["arch_set"].present();
  std::string arch = e["arch"].present() ? existing_yaml_path(e["arch"]) : d.arch;
  std::vector<std::string> arch_set = d.arch_set;
  for (const std::string& s : read_overrides(e["arch_set"])) arch_set.push_back(s);
  const YamlField arch_where = e["arch_set"].present() ? e["arch_set"] : e["arch"].present() ? e["arch"] : e;

  auto finish = [&](Job j) {
    if (j.replay.empty()) j.replay = j.args;
    out.push_back(std::move(j));
  };

  if (kind == "golden") {
    const YamlField g = e["golden"];
    std::vector<std::string> paths;
    if (g.is_list()) {
      if (g.size() == 0) throw g.error("expected at least one golden-case file or folder");
      for (size_t i = 0; i < g.size(); ++i) paths.push_back(existing_yaml_path(g.at(i)));
    } else {
      paths.push_back(existing_yaml_path(g));
    }
    const std::string engine = e["engine"].as_string_or("ref");
    if (engine != "ref" && engine != "tlm") throw e["engine"].error("expected ref or tlm, got '" + engine + "'");
    Job j = base;
    j.id = name;
    j.args = {"check"};
    if (engine == "tlm") {
      if (arch.empty()) arch = abs_path(resolve_project_path("configs/arch/h100.yaml"));
      j.arch = arch;
      j.arch_set = arch_set;
      j.resolved_arch = arches.resolve(arch, arch_set, arch_where);
      j.args.insert(j.args.end(), {"--engine", "tlm"});
      add_arch_args(j.args, arch, arch_set);
    } else if (own_arch) {
      throw arch_where.error("the reference engine takes no architecture (use engine: tlm)");
    }
    j.args.push_back("--quiet");
    j.args.insert(j.args.end(), paths.begin(), paths.end());
    j.args.insert(j.args.end(), extra.begin(), extra.end());
    finish(j);
  } else if (kind == "scenario") {
    const std::string scenario = existing_yaml_path(e["scenario"]);
    const std::vector<Override> sets = read_located_overrides(e["set"]);
    const Scenario s = load_job_scenario(scenario, sets, e["scenario"], "");
    if (arch.empty()) arch = abs_path(s.arch);
    Job j = base;
    j.id = name;
    j.arch = arch;
    j.arch_set = arch_set;
    j.resolved_arch = arches.resolve(arch, arch_set, arch_where);
    check_fits(s, arches.config(j.resolved_arch), e["scenario"], "");
    j.args = {"run", scenario};
    add_arch_args(j.args, arch, arch_set);
    for (const std::string& o : texts(sets)) {
      j.args.push_back("--set");
      j.args.push_back(o);
    }
    j.args.push_back("--quiet");
    j.args.insert(j.args.end(), extra.begin(), extra.end());
    finish(j);
  } else if (kind == "random") {
    const YamlField r = e["random"];
    if (!r.is_map()) throw r.error("expected a mapping: {seed: S, count: N, reseed: R, start: K}");
    r.check_keys({"seed", "count", "start", "reseed"});
    const uint64_t seed = r["seed"].as_uint64(0, 0xffffffffull);
    const uint64_t count = r["count"].as_uint64(1, 1000000000ull);
    const bool has_start = !r["start"].is_null();
    const uint64_t start = has_start ? r["start"].as_uint64(0, 1000000000000ull) : 0;
    const uint64_t reseed = r["reseed"].as_uint64_or(1, 1, 100000);
    const uint64_t base_seed = run_seed ? entry_seed(*run_seed, name) : seed;
    const std::string engine = e["engine"].as_string_or("");
    if (!engine.empty() && engine != "ref" && engine != "tlm")
      throw e["engine"].error("expected ref or tlm, got '" + engine + "'");
    if (engine == "ref" && own_arch) throw arch_where.error("the reference engine takes no architecture");
    std::string resolved;
    if (!arch.empty() && engine != "ref") resolved = arches.resolve(arch, arch_set, arch_where);
    for (uint64_t k = 0; k < reseed; ++k) {
      Job j = base;
      j.id = name + "." + padded(k, reseed);
      j.seed = job_seed(base_seed, k);
      j.args = {"random", "--seed", std::to_string(*j.seed), "--count", std::to_string(count)};
      if (has_start) j.args.insert(j.args.end(), {"--start", std::to_string(start)});
      if (!engine.empty()) j.args.insert(j.args.end(), {"--engine", engine});
      // Generators take an architecture only when the test (or the defaults) names one.
      if (!resolved.empty()) {
        j.arch = arch;
        j.arch_set = arch_set;
        j.resolved_arch = resolved;
        add_arch_args(j.args, arch, arch_set);
      }
      j.args.insert(j.args.end(), extra.begin(), extra.end());
      j.replay = j.args;
      j.coverage = "coverage/" + j.id + ".json";
      j.args.push_back("--coverage");
      j.args.push_back(std::string(kRunDir) + "/" + j.coverage);
      finish(j);
    }
  } else {  // selftest: the runner's own fault injection (docs/regressions.md)
    const std::string mode = e["selftest"].as_string();
    if (!kSelftestModes.count(mode))
      throw e["selftest"].error("expected one of: pass, fail, error, crash, abort, hang; got '" + mode + "'");
    if (own_arch) throw arch_where.error("selftest takes no architecture");
    Job j = base;
    j.id = name;
    j.args = {"regress-selftest", mode};
    j.args.insert(j.args.end(), extra.begin(), extra.end());
    finish(j);
  }
}

void collect_list(const YamlField& lists, const std::string& name, const YamlField& where,
                  std::vector<std::string>& stack, std::set<std::string>& done, std::vector<YamlField>& tests) {
  const YamlField l = lists[name];
  if (!l.present()) {
    std::string names;
    for (const std::string& k : lists.keys()) names += (names.empty() ? "" : ", ") + k;
    throw where.error("no list named '" + name + "' (the file has: " + names + ")");
  }
  if (std::find(stack.begin(), stack.end(), name) != stack.end())
    throw where.error("list '" + name + "' includes itself (through " + stack.back() + ")");
  if (done.count(name)) return;  // included twice: its tests once
  done.insert(name);
  stack.push_back(name);
  if (!l.is_map()) throw l.error("expected a mapping with 'tests' and/or 'include'");
  l.check_keys({"description", "include", "tests"});
  const YamlField inc = l["include"];
  if (inc.present()) {
    if (!inc.is_list()) throw inc.error("expected a list of list names");
    for (size_t i = 0; i < inc.size(); ++i) collect_list(lists, inc.at(i).as_string(), inc.at(i), stack, done, tests);
  }
  const YamlField t = l["tests"];
  if (t.present() && !t.is_list()) throw t.error("expected a list of tests");
  for (size_t i = 0; i < t.size(); ++i) {
    if (!t.at(i).is_map()) throw t.at(i).error("expected a test: a mapping with a name and a kind");
    tests.push_back(t.at(i));
  }
  stack.pop_back();
}

void finish_plan(Plan& plan) {
  std::sort(plan.jobs.begin(), plan.jobs.end(), [](const Job& a, const Job& b) { return a.id < b.id; });
  plan.all_ids.clear();
  for (const Job& j : plan.jobs) plan.all_ids.push_back(j.id);
  plan.tma_sim = self_exe();
  plan.created = utc_timestamp();
}

}  // namespace

std::vector<std::string> regression_lists(const std::string& path) {
  YamlDoc doc = YamlDoc::load(path);
  const YamlField lists = doc.root()["lists"];
  return lists.is_map() ? lists.keys() : std::vector<std::string>{};
}

Plan load_regression(const std::string& path, const std::string& list, std::optional<uint64_t> seed) {
  YamlDoc doc = YamlDoc::load(path);
  const YamlField root = doc.root();
  if (!root.is_map()) throw root.error("expected a mapping with 'lists'");
  root.check_keys({"description", "defaults", "lists"});
  Plan plan;
  plan.mode = "regress";
  plan.source = fs::absolute(path).lexically_normal().string();
  plan.seed = seed;
  ArchResolver arches(plan);

  Defaults d;
  const YamlField def = root["defaults"];
  if (def.present()) {
    if (!def.is_map()) throw def.error("expected a mapping: timeout, arch, arch_set");
    def.check_keys({"timeout", "arch", "arch_set"});
    d.timeout = def["timeout"].as_double_or(d.timeout, 0.001, 1e7);
    if (def["arch"].present()) d.arch = existing_yaml_path(def["arch"]);
    d.arch_set = read_overrides(def["arch_set"]);
  }
  const YamlField lists = root["lists"];
  if (!lists.is_map() || lists.keys().empty()) throw lists.error("expected a mapping of list names to lists");
  plan.name = list.empty() ? lists.keys().front() : list;
  std::vector<std::string> stack;
  std::set<std::string> done;
  std::vector<YamlField> tests;
  collect_list(lists, plan.name, lists, stack, done, tests);
  if (tests.empty()) throw lists[plan.name].error("list '" + plan.name + "' has no tests");

  std::map<std::string, std::string> origin;  // job id -> where it was defined
  for (const YamlField& t : tests) {
    std::vector<Job> jobs;
    read_entry(t, d, seed, arches, jobs);
    for (Job& j : jobs) {
      auto [it, fresh] = origin.emplace(j.id, j.source);
      if (!fresh) throw t["name"].error("job id '" + j.id + "' is also made by the test at " + it->second);
      plan.jobs.push_back(std::move(j));
    }
  }
  finish_plan(plan);
  return plan;
}

Plan load_sweep(const std::string& path) {
  YamlDoc doc = YamlDoc::load(path);
  const YamlField root = doc.root();
  if (!root.is_map()) throw root.error("expected a mapping with name, scenario and parameters");
  root.check_keys({"name", "description", "scenario", "arch", "set", "arch_set", "scoreboard", "timeout", "parameters"});
  Plan plan;
  plan.mode = "sweep";
  plan.source = fs::absolute(path).lexically_normal().string();
  plan.name = checked_name(root["name"]);
  ArchResolver arches(plan);

  const std::string scenario = existing_yaml_path(root["scenario"]);
  const std::vector<Override> base_sets = read_located_overrides(root["set"]);
  const std::vector<std::string> base_arch_sets = read_overrides(root["arch_set"]);
  const bool scoreboard = root["scoreboard"].as_bool_or(true);
  const double timeout = root["timeout"].as_double_or(600, 0.001, 1e7);
  // Without one, each point runs on its scenario's architecture.
  const std::string arch = root["arch"].present() ? existing_yaml_path(root["arch"]) : "";

  struct Value {
    std::string label;
    std::vector<Override> sets;
    std::vector<std::string> arch_sets;
    YamlField where;
  };
  struct Param {
    std::string name;
    std::vector<Value> values;
  };
  std::vector<Param> params;
  const YamlField ps = root["parameters"];
  if (!ps.is_list() || ps.size() == 0) throw ps.error("expected a list of parameters (name, set or arch, values)");
  uint64_t points = 1;
  for (size_t i = 0; i < ps.size(); ++i) {
    const YamlField p = ps.at(i);
    if (!p.is_map()) throw p.error("expected a parameter: {name, set or arch, values}");
    p.check_keys({"name", "set", "arch", "values"});
    Param par;
    par.name = checked_name(p["name"]);
    for (const Param& q : params)
      if (q.name == par.name) throw p["name"].error("parameter '" + par.name + "' is named twice");
    if (p["set"].present() && p["arch"].present()) throw p.error("a parameter takes 'set' or 'arch', not both");
    const std::string set_path = p["set"].as_string_or(""), arch_field = p["arch"].as_string_or("");
    const YamlField vs = p["values"];
    if (!vs.is_list() || vs.size() == 0) throw vs.error("expected a list of values");
    for (size_t k = 0; k < vs.size(); ++k) {
      const YamlField v = vs.at(k);
      Value val{"", {}, {}, v};
      if (v.is_map()) {
        v.check_keys({"label", "set", "arch_set"});
        val.label = v["label"].as_string();
        val.sets = read_located_overrides(v["set"]);
        val.arch_sets = read_overrides(v["arch_set"]);
      } else {
        if (set_path.empty() && arch_field.empty())
          throw v.error("a plain value needs the parameter's 'set' (scenario path) or 'arch' (architecture field); "
                        "or write {label, set, arch_set}");
        const std::string text = render(v);
        val.label = v.is_scalar() ? v.as_string() : text;
        if (!set_path.empty()) val.sets.push_back({set_path + "=" + text, v});
        else val.arch_sets.push_back(arch_field + "=" + text);
      }
      if (val.label.empty()) throw v.error("empty label");
      for (const Value& o : par.values)
        if (o.label == val.label) throw v.error("label '" + val.label + "' appears twice in parameter '" + par.name + "'");
      par.values.push_back(std::move(val));
    }
    points *= par.values.size();
    if (points > 100000) throw p.error("the sweep has more than 100000 points");
    params.push_back(std::move(par));
    plan.param_names.push_back(params.back().name);
  }

  std::vector<size_t> idx(params.size(), 0);
  for (uint64_t n = 0; n < points; ++n) {
    Job j;
    j.kind = "sweep";
    j.timeout_s = timeout;
    j.id = padded(n, points);
    std::vector<Override> sets = base_sets;
    std::vector<std::string> arch_sets = base_arch_sets;
    YamlField last = ps;
    for (size_t p = 0; p < params.size(); ++p) {
      const Value& v = params[p].values[idx[p]];
      j.id += "-" + file_safe(v.label);
      j.params.emplace_back(params[p].name, v.label);
      sets.insert(sets.end(), v.sets.begin(), v.sets.end());
      arch_sets.insert(arch_sets.end(), v.arch_sets.begin(), v.arch_sets.end());
      if (!v.arch_sets.empty()) last = v.where;
    }
    const Scenario s = load_job_scenario(scenario, sets, root["scenario"], j.id);
    j.source = source_of(ps);
    j.arch = arch.empty() ? abs_path(s.arch) : arch;
    j.arch_set = arch_sets;
    j.resolved_arch = arches.resolve(j.arch, arch_sets, arch_sets.empty() ? root : last);
    check_fits(s, arches.config(j.resolved_arch), root["scenario"], j.id);
    j.args = {"run", scenario};
    add_arch_args(j.args, j.arch, arch_sets);
    for (const std::string& o : texts(sets)) {
      j.args.push_back("--set");
      j.args.push_back(o);
    }
    j.args.push_back("--quiet");
    if (!scoreboard) j.args.push_back("--no-scoreboard");
    j.replay = j.args;
    j.stats = "stats/" + j.id + ".json";
    j.args.push_back("--stats");
    j.args.push_back(std::string(kRunDir) + "/" + j.stats);
    plan.jobs.push_back(std::move(j));
    for (size_t p = params.size(); p-- > 0;) {  // odometer: the last parameter varies fastest
      if (++idx[p] < params[p].values.size()) break;
      idx[p] = 0;
    }
  }
  finish_plan(plan);
  return plan;
}

void apply_shard(Plan& plan, const Shard& shard) {
  plan.shard = shard;
  const std::vector<std::string> keep = shard_ids(plan.all_ids, shard);
  const std::set<std::string> keep_set(keep.begin(), keep.end());
  std::vector<Job> jobs;
  for (Job& j : plan.jobs)
    if (keep_set.count(j.id)) jobs.push_back(std::move(j));
  plan.jobs = std::move(jobs);
  // Only the architecture files this shard's jobs use.
  std::map<std::string, std::string> arch;
  for (const Job& j : plan.jobs)
    if (!j.resolved_arch.empty()) arch[j.resolved_arch] = plan.arch_files[j.resolved_arch];
  plan.arch_files = std::move(arch);
}

// ---- plan.json ----

namespace {

std::string json_list(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + json_quote(v[i]);
  return out + "]";
}

std::vector<std::string> node_strings(const YAML::Node& n) {
  std::vector<std::string> out;
  if (n && n.IsSequence())
    for (const auto& e : n) out.push_back(e.as<std::string>());
  return out;
}

std::string node_string(const YAML::Node& n) { return n && !n.IsNull() ? n.as<std::string>() : std::string(); }

}  // namespace

std::string plan_to_json(const Plan& p) {
  std::string o = "{\n";
  o += "  \"format\": " + json_quote(kFormat) + ",\n";
  o += "  \"mode\": " + json_quote(p.mode) + ",\n";
  o += "  \"source\": " + json_quote(p.source) + ",\n";
  o += "  \"name\": " + json_quote(p.name) + ",\n";
  o += "  \"seed\": " + (p.seed ? std::to_string(*p.seed) : std::string("null")) + ",\n";
  o += "  \"shard\": " + json_quote(std::to_string(p.shard.index) + "/" + std::to_string(p.shard.count)) + ",\n";
  o += "  \"tma_sim\": " + json_quote(p.tma_sim) + ",\n";
  o += "  \"created\": " + json_quote(p.created) + ",\n";
  o += "  \"param_names\": " + json_list(p.param_names) + ",\n";
  o += "  \"all_ids\": " + json_list(p.all_ids) + ",\n";
  o += "  \"arch_files\": {";
  bool first = true;
  for (const auto& [k, v] : p.arch_files) {
    o += std::string(first ? "\n" : ",\n") + "    " + json_quote(k) + ": " + json_quote(v);
    first = false;
  }
  o += p.arch_files.empty() ? "},\n" : "\n  },\n";
  o += "  \"jobs\": [";
  for (size_t i = 0; i < p.jobs.size(); ++i) {
    const Job& j = p.jobs[i];
    o += std::string(i ? ",\n" : "\n") + "    {\"id\": " + json_quote(j.id) + ", \"kind\": " + json_quote(j.kind) +
         ", \"source\": " + json_quote(j.source) + ", \"timeout\": " + std::to_string(j.timeout_s) +
         ",\n     \"args\": " + json_list(j.args) + ",\n     \"replay\": " + json_list(j.replay) +
         ",\n     \"arch\": " + json_quote(j.arch) + ", \"arch_set\": " + json_list(j.arch_set) +
         ", \"resolved_arch\": " + json_quote(j.resolved_arch) +
         ", \"seed\": " + (j.seed ? std::to_string(*j.seed) : std::string("null")) +
         ", \"stats\": " + json_quote(j.stats) + ", \"coverage\": " + json_quote(j.coverage) + ", \"params\": [";
    for (size_t k = 0; k < j.params.size(); ++k)
      o += (k ? ", " : "") + json_list({j.params[k].first, j.params[k].second});
    o += "]}";
  }
  o += p.jobs.empty() ? "]\n" : "\n  ]\n";
  return o + "}\n";
}

Plan plan_from_json(const std::string& path) {
  YAML::Node n;
  try {
    n = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(path + ": not a readable plan: " + e.what());
  }
  try {
    if (node_string(n["format"]) != kFormat)
      throw std::runtime_error("unknown format '" + node_string(n["format"]) + "' (expected " + kFormat + ")");
    Plan p;
    p.mode = node_string(n["mode"]);
    p.source = node_string(n["source"]);
    p.name = node_string(n["name"]);
    if (n["seed"] && !n["seed"].IsNull()) p.seed = n["seed"].as<uint64_t>();
    p.shard = parse_shard(node_string(n["shard"]));
    p.tma_sim = node_string(n["tma_sim"]);
    p.created = node_string(n["created"]);
    p.param_names = node_strings(n["param_names"]);
    p.all_ids = node_strings(n["all_ids"]);
    if (n["arch_files"] && n["arch_files"].IsMap())
      for (const auto& kv : n["arch_files"]) p.arch_files[kv.first.as<std::string>()] = kv.second.as<std::string>();
    for (const auto& jn : n["jobs"]) {
      Job j;
      j.id = node_string(jn["id"]);
      j.kind = node_string(jn["kind"]);
      j.source = node_string(jn["source"]);
      j.timeout_s = jn["timeout"].as<double>();
      j.args = node_strings(jn["args"]);
      j.replay = node_strings(jn["replay"]);
      j.arch = node_string(jn["arch"]);
      j.arch_set = node_strings(jn["arch_set"]);
      j.resolved_arch = node_string(jn["resolved_arch"]);
      if (jn["seed"] && !jn["seed"].IsNull()) j.seed = jn["seed"].as<uint64_t>();
      j.stats = node_string(jn["stats"]);
      j.coverage = node_string(jn["coverage"]);
      for (const auto& pr : jn["params"]) j.params.emplace_back(pr[0].as<std::string>(), pr[1].as<std::string>());
      if (!valid_name(j.id)) throw std::runtime_error("bad job id '" + j.id + "'");
      p.jobs.push_back(std::move(j));
    }
    return p;
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(path + ": malformed plan: " + e.what());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

std::string expand_run_dir(const std::string& arg, const std::string& run_dir) {
  std::string out = arg;
  const std::string key = kRunDir;
  for (size_t at = out.find(key); at != std::string::npos; at = out.find(key, at + run_dir.size()))
    out.replace(at, key.size(), run_dir);
  return out;
}

std::string replay_command(const Plan& plan, const Job& job, const std::string& run_dir) {
  std::vector<std::string> argv{plan.tma_sim.empty() ? std::string("tma-sim") : plan.tma_sim};
  for (const std::string& a : job.replay) argv.push_back(expand_run_dir(a, run_dir));
  return shell_join(argv);
}

}  // namespace tma::regress
