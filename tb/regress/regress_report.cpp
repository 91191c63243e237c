#include "tma/regress/regress_report.h"

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

namespace fs = std::filesystem;

namespace tma::regress {

const char* status_name(Status s) {
  switch (s) {
    case Status::pass: return "pass";
    case Status::fail: return "fail";
    case Status::error: return "error";
    case Status::crash: return "crash";
    case Status::timeout: return "timeout";
    case Status::skipped: return "skipped";
    case Status::not_run: return "not_run";
  }
  return "?";
}

std::optional<Status> parse_status(const std::string& n) {
  for (Status s : {Status::pass, Status::fail, Status::error, Status::crash, Status::timeout, Status::skipped,
                   Status::not_run})
    if (n == status_name(s)) return s;
  return std::nullopt;
}

bool is_failure(Status s) {
  return s == Status::fail || s == Status::error || s == Status::crash || s == Status::timeout;
}

// ---- results ----

std::string result_path(const std::string& run_dir, const std::string& id) {
  return (fs::path(run_dir) / "results" / (id + ".json")).string();
}

std::string result_to_json(const Result& r) {
  std::string o = "{\n";
  o += "  \"id\": " + json_quote(r.id) + ",\n";
  o += "  \"status\": " + json_quote(status_name(r.status)) + ",\n";
  o += "  \"exit_code\": " + std::to_string(r.exit_code) + ",\n";
  o += "  \"signal\": " + std::to_string(r.signal) + ",\n";
  o += "  \"signal_name\": " + json_quote(r.signal ? signal_name(r.signal) : "") + ",\n";
  o += "  \"seconds\": " + format_seconds(r.seconds) + ",\n";
  o += "  \"first_failing_line\": " + json_quote(r.first_line) + ",\n";
  o += "  \"signature\": " + json_quote(r.signature) + ",\n";
  o += "  \"reason\": " + json_quote(r.reason) + ",\n";
  o += "  \"log\": " + json_quote(r.log) + ",\n";
  o += "  \"finished\": " + json_quote(r.finished) + ",\n";
  o += "  \"host\": " + json_quote(r.host) + ",\n";
  o += "  \"summary\": {";
  for (size_t i = 0; i < r.summary.size(); ++i)
    o += std::string(i ? ", " : "") + json_quote(r.summary[i].first) + ": " + json_quote(r.summary[i].second);
  return o + "}\n}\n";
}

Result result_from_json(const std::string& path) {
  try {
    const YAML::Node n = YAML::LoadFile(path);
    Result r;
    auto str = [&](const char* k) { return n[k] && !n[k].IsNull() ? n[k].as<std::string>() : std::string(); };
    r.id = str("id");
    const auto st = parse_status(str("status"));
    if (r.id.empty() || !st) throw std::runtime_error("no id or an unknown status");
    r.status = *st;
    r.exit_code = n["exit_code"] ? n["exit_code"].as<int>() : -1;
    r.signal = n["signal"] ? n["signal"].as<int>() : 0;
    r.seconds = n["seconds"] ? n["seconds"].as<double>() : 0;
    r.first_line = str("first_failing_line");
    r.signature = str("signature");
    r.reason = str("reason");
    r.log = str("log");
    r.finished = str("finished");
    r.host = str("host");
    if (n["summary"] && n["summary"].IsMap())
      for (const auto& kv : n["summary"]) r.summary.emplace_back(kv.first.as<std::string>(), kv.second.as<std::string>());
    return r;
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(path + ": malformed result: " + e.what());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": malformed result: " + e.what());
  }
}

std::map<std::string, Result> load_results(const std::string& run_dir) {
  std::map<std::string, Result> out;
  std::error_code ec;
  const fs::path dir = fs::path(run_dir) / "results";
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const fs::path p = e.path();
    if (p.extension() != ".json" || p.filename().string()[0] == '.') continue;
    if (p.filename().string().find(".tmp.") != std::string::npos) continue;
    try {
      Result r = result_from_json(p.string());
      out[r.id] = std::move(r);
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "regress: %s (ignored: the job counts as not run)\n", ex.what());
    }
  }
  return out;
}

// ---- signatures ----

namespace {

const char* const kFailureWords[] = {"mismatch", "fail",    "error",     "expected", "abort",  "assert",
                                     "violation", "exception", "terminate", "segmentation", "fault", "panic",
                                     "cannot",   "unknown", "timed out", "timeout"};

std::string lower(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// 0: no failure word; 1: only counts of failures ("3 mismatches"); 2: a failure said in words.
// Zero counts ("0 failed") do not count.
int failure_strength(const std::string& line) {
  const std::string l = lower(line);
  if (l.rfind("tma-sim ", 0) == 0 && l.find(": ") != std::string::npos) return 2;  // a command's error
  int strength = 0;
  for (const char* w : kFailureWords) {
    for (size_t at = l.find(w); at != std::string::npos; at = l.find(w, at + 1)) {
      if (at > 0 && std::isalpha(static_cast<unsigned char>(l[at - 1]))) continue;  // inside a word
      // A count: "<number> <word>" (also "<number> checks, 0 violations" style).
      size_t b = at;
      if (b > 0 && l[b - 1] == ' ') {
        size_t e = b - 1, s = e;
        while (s > 0 && std::isdigit(static_cast<unsigned char>(l[s - 1]))) --s;
        if (s < e) {
          const std::string number = l.substr(s, e - s);
          if (number.find_first_not_of('0') == std::string::npos) continue;  // zero: not a failure
          strength = std::max(strength, 1);
          continue;
        }
      }
      return 2;
    }
  }
  return strength;
}

}  // namespace

std::string first_failing_line(const std::string& log, bool fallback_last) {
  std::string weak, last;
  size_t start = 0;
  while (start < log.size()) {
    size_t end = log.find('\n', start);
    if (end == std::string::npos) end = log.size();
    std::string line = log.substr(start, end - start);
    start = end + 1;
    // A progress line rewritten with '\r' keeps its last state.
    if (const size_t cr = line.find_last_of('\r'); cr != std::string::npos) line = line.substr(cr + 1);
    if (line.rfind("# regress:", 0) == 0) continue;
    const std::string p = printable(line, 1000);
    size_t first = p.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    const std::string t = p.substr(first);
    last = t;
    const int s = failure_strength(t);
    if (s == 2) return printable(t);
    if (s == 1 && weak.empty()) weak = t;
  }
  if (!weak.empty()) return printable(weak);
  return fallback_last ? printable(last) : std::string();
}

std::string normalise(const std::string& line) {
  // Paths lose their folders (runs on other machines and folders group together).
  std::string a;
  size_t token_start = 0;
  for (char c : line) {
    if (c == '/') {
      a.erase(token_start);
      continue;
    }
    a += c;
    if (std::isspace(static_cast<unsigned char>(c)) || std::strchr("'\"(=,[{<", c)) token_start = a.size();
  }
  // Numbers: hex to 0x#, decimal digit runs (and their fractions) to #.
  std::string b;
  for (size_t i = 0; i < a.size();) {
    if (a[i] == '0' && i + 2 < a.size() && (a[i + 1] == 'x' || a[i + 1] == 'X') &&
        std::isxdigit(static_cast<unsigned char>(a[i + 2]))) {
      i += 2;
      while (i < a.size() && std::isxdigit(static_cast<unsigned char>(a[i]))) ++i;
      b += "0x#";
    } else if (std::isdigit(static_cast<unsigned char>(a[i]))) {
      while (i < a.size() && (std::isdigit(static_cast<unsigned char>(a[i])) ||
                              (a[i] == '.' && i + 1 < a.size() && std::isdigit(static_cast<unsigned char>(a[i + 1])))))
        ++i;
      b += '#';
    } else {
      b += a[i++];
    }
  }
  // Spaces collapse.
  std::string c;
  for (char ch : b) {
    if (std::isspace(static_cast<unsigned char>(ch))) {
      if (!c.empty() && c.back() != ' ') c += ' ';
    } else {
      c += ch;
    }
  }
  while (!c.empty() && c.back() == ' ') c.pop_back();
  return printable(c, 200);
}

std::string signal_name(int sig) {
  static const std::map<int, const char*> names = {
      {SIGSEGV, "SIGSEGV"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGILL, "SIGILL"},
      {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"},   {SIGPIPE, "SIGPIPE"}, {SIGHUP, "SIGHUP"},
      {SIGQUIT, "SIGQUIT"}, {SIGTRAP, "SIGTRAP"}, {SIGXCPU, "SIGXCPU"}, {SIGSYS, "SIGSYS"}};
  auto it = names.find(sig);
  return it != names.end() ? it->second : "signal " + std::to_string(sig);
}

std::string make_signature(Status s, int signal, const std::string& first_line) {
  const std::string n = normalise(first_line);
  switch (s) {
    case Status::fail: return n.empty() ? "exit 1 (no failing line in the log)" : n;
    case Status::error: return n.empty() ? "error (no failing line in the log)" : "error: " + n;
    case Status::crash: return signal_name(signal) + (n.empty() ? "" : ": " + n);
    case Status::timeout: return "timeout";
    default: return "";
  }
}

std::vector<std::pair<std::string, std::string>> read_stats_summary(const std::string& path) {
  std::vector<std::pair<std::string, std::string>> out;
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception&) {
    return out;
  }
  auto read_string = [&](size_t& i) {  // at the opening quote
    std::string s;
    for (++i; i < text.size() && text[i] != '"'; ++i) {
      if (text[i] == '\\' && i + 1 < text.size()) {
        ++i;
        s += text[i] == 'n' ? '\n' : text[i] == 't' ? '\t' : text[i];
      } else {
        s += text[i];
      }
    }
    ++i;
    return s;
  };
  const std::string key = "\"summary.";
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at)) {
    size_t i = at;
    const std::string name = read_string(i).substr(8);
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i >= text.size() || text[i] != ':') {
      at = i;
      continue;
    }
    ++i;
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    std::string value;
    if (i < text.size() && text[i] == '"') {
      value = read_string(i);
    } else {
      const size_t e = text.find_first_of(",}\n", i);
      value = text.substr(i, e == std::string::npos ? std::string::npos : e - i);
      while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) value.pop_back();
      i = e == std::string::npos ? text.size() : e;
    }
    out.emplace_back(name, value);
    at = i;
  }
  return out;
}

// ---- reports ----

Counts count(const Report& r) {
  Counts c;
  for (const ReportEntry& e : r.entries) {
    ++c.total;
    if (!e.result || e.result->status == Status::not_run) {
      ++c.not_run;
      continue;
    }
    c.seconds += e.result->seconds;
    if (e.result->status == Status::pass) ++c.passed;
    else if (e.result->status == Status::skipped) ++c.skipped;
    else ++c.failed;
  }
  return c;
}

int exit_status(const Report& r) {
  const Counts c = count(r);
  return c.failed || c.not_run ? 1 : 0;
}

std::string replay_of(const ReportEntry& e) {
  std::vector<std::string> argv{e.tma_sim.empty() ? std::string("tma-sim") : e.tma_sim};
  for (const std::string& a : e.job.replay) argv.push_back(expand_run_dir(a, e.run_dir));
  return shell_join(argv);
}

namespace {

std::string status_of(const ReportEntry& e) { return e.result ? status_name(e.result->status) : "not_run"; }

std::string log_path(const ReportEntry& e) {
  if (!e.result || e.result->log.empty()) return "";
  return (fs::path(e.run_dir) / e.result->log).string();
}

std::string arch_text(const ReportEntry& e) {
  if (e.job.arch.empty()) return "";
  std::string s = e.job.arch;
  for (const std::string& a : e.job.arch_set) s += " --arch-set " + a;
  if (!e.job.resolved_arch.empty()) s += " (resolved: " + (fs::path(e.run_dir) / e.job.resolved_arch).string() + ")";
  return s;
}

// Up to `head` bytes from the start and `tail` from the end of a file.
std::string log_excerpt(const std::string& path, size_t head, size_t tail) {
  if (path.empty()) return "";
  std::string t;
  try {
    t = read_file(path);
  } catch (const std::exception&) {
    return "(log not found: " + path + ")";
  }
  if (t.size() <= head + tail) return t;
  return t.substr(0, head) + "\n[... " + std::to_string(t.size() - head - tail) + " bytes left out ...]\n" +
         t.substr(t.size() - tail);
}

struct Group {
  std::string signature, status;
  std::vector<const ReportEntry*> jobs;
};

std::vector<Group> groups(const Report& r) {
  std::map<std::pair<std::string, std::string>, Group> g;
  for (const ReportEntry& e : r.entries) {
    if (!e.result || !is_failure(e.result->status)) continue;
    Group& grp = g[{e.result->signature, status_name(e.result->status)}];
    grp.signature = e.result->signature;
    grp.status = status_name(e.result->status);
    grp.jobs.push_back(&e);
  }
  std::vector<Group> out;
  for (auto& [k, v] : g) out.push_back(std::move(v));
  // Most frequent first; ties by signature (deterministic).
  std::stable_sort(out.begin(), out.end(), [](const Group& a, const Group& b) { return a.jobs.size() > b.jobs.size(); });
  return out;
}

std::string md_cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string md_code(const std::string& s) {
  if (s.empty()) return "";
  if (s.find('`') != std::string::npos) return md_cell(s);
  return "`" + md_cell(s) + "`";
}

std::string title(const Report& r) {
  return std::string(r.mode == "sweep" ? "Sweep " : "Regression ") + r.name;
}

std::string counts_text(const Counts& c) {
  std::string s = std::to_string(c.passed) + " passed, " + std::to_string(c.failed) + " failed";
  if (c.skipped) s += ", " + std::to_string(c.skipped) + " skipped";
  if (c.not_run) s += ", " + std::to_string(c.not_run) + " not run";
  return s;
}

std::string params_text(const ReportEntry& e) {
  std::string s;
  for (const auto& [k, v] : e.job.params) s += (s.empty() ? "" : ", ") + k + "=" + v;
  return s;
}

}  // namespace

std::string junit_xml(const Report& r) {
  const Counts c = count(r);
  const std::string suite = (r.mode == "sweep" ? "sweep." : "regress.") + r.name;
  std::string o = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  // Jobs that did not run (an interrupted run, a missing shard) are errors: a dashboard must not
  // show a run that stopped halfway as green with most of its tests skipped.
  const std::string counts = "tests=\"" + std::to_string(c.total) + "\" failures=\"" + std::to_string(c.failed) +
                             "\" errors=\"" + std::to_string(c.not_run) + "\" skipped=\"" +
                             std::to_string(c.skipped) + "\" time=\"" + format_seconds(c.seconds) + "\"";
  o += "<testsuites name=\"" + xml_escape("tma-sim " + suite) + "\" " + counts + ">\n";
  o += "  <testsuite name=\"" + xml_escape(suite) + "\" " + counts + " timestamp=\"" + utc_timestamp() + "\">\n";
  o += "    <properties>\n";
  auto prop = [&](const std::string& k, const std::string& v) {
    o += "      <property name=\"" + xml_escape(k) + "\" value=\"" + xml_escape(v) + "\"/>\n";
  };
  prop("source", r.source);
  prop("shard", r.shard);
  prop("seed", r.seed ? std::to_string(*r.seed) : "");
  prop("location", r.location);
  if (r.interrupted) prop("interrupted", "true");
  o += "    </properties>\n";
  for (const ReportEntry& e : r.entries) {
    const double secs = e.result ? e.result->seconds : 0;
    o += "    <testcase name=\"" + xml_escape(e.job.id) + "\" classname=\"" +
         xml_escape(suite + "." + (e.job.kind.empty() ? "job" : e.job.kind)) + "\" time=\"" + format_seconds(secs) +
         "\"";
    if (e.result && e.result->status == Status::pass) {
      o += ">\n";
      o += "      <system-out>" + xml_escape(log_excerpt(log_path(e), 0, 2048)) + "</system-out>\n";
      o += "    </testcase>\n";
      continue;
    }
    o += ">\n";
    if (!e.result || e.result->status == Status::not_run) {
      o += "      <error type=\"not_run\" message=\"not run" +
           std::string(r.interrupted ? " (the run was interrupted)" : "") + "\"/>\n";
    } else if (e.result->status == Status::skipped) {
      o += "      <skipped message=\"" + xml_escape(e.result->reason) + "\"/>\n";
    } else {
      const Result& res = *e.result;
      std::string body = "status: " + std::string(status_name(res.status));
      if (res.signal) body += " (" + signal_name(res.signal) + ")";
      else body += " (exit " + std::to_string(res.exit_code) + ")";
      if (!res.reason.empty()) body += "\nreason: " + res.reason;
      body += "\nfirst failing line: " + res.first_line;
      body += "\nreplay: " + replay_of(e);
      if (!e.job.arch.empty()) body += "\narch: " + arch_text(e);
      body += "\nlog: " + log_path(e);
      o += "      <failure type=\"" + std::string(status_name(res.status)) + "\" message=\"" +
           xml_escape(res.signature) + "\">" + xml_escape(body) + "</failure>\n";
      o += "      <system-out>" + xml_escape(log_excerpt(log_path(e), 8192, 57344)) + "</system-out>\n";
    }
    o += "    </testcase>\n";
  }
  o += "  </testsuite>\n</testsuites>\n";
  return o;
}

std::string summary_markdown(const Report& r) {
  const Counts c = count(r);
  std::string o = "# " + title(r) + ": " + counts_text(c) + "\n\n";
  if (r.interrupted) o += "**The run was interrupted**: " + std::to_string(c.not_run) + " jobs did not finish; "
                          "`tma-sim " + std::string(r.mode == "sweep" ? "sweep" : "regress") + " --resume " +
                          r.location + "` runs them.\n\n";
  o += "| | |\n|---|---|\n";
  o += "| source | " + md_code(r.source) + " |\n";
  o += "| " + std::string(r.mode == "sweep" ? "sweep" : "list") + " | " + md_cell(r.name) + " |\n";
  o += "| shard | " + md_cell(r.shard) + " |\n";
  o += "| seed | " + (r.seed ? std::to_string(*r.seed) : std::string("(the file's)")) + " |\n";
  o += "| folder | " + md_code(r.location) + " |\n";
  o += "| jobs | " + std::to_string(c.total) + ": " + counts_text(c) + " |\n";
  o += "| job time | " + format_seconds(c.seconds) + " s |\n\n";

  const std::vector<Group> gs = groups(r);
  if (!gs.empty()) {
    o += "## Failures by signature\n\n| count | status | signature | jobs |\n|---:|---|---|---|\n";
    for (const Group& g : gs) {
      std::string ids;
      for (const ReportEntry* e : g.jobs) ids += (ids.empty() ? "" : ", ") + e->job.id;
      o += "| " + std::to_string(g.jobs.size()) + " | " + g.status + " | " + md_code(g.signature) + " | " +
           md_cell(ids) + " |\n";
    }
    o += "\n## Replay\n\nEach command reruns one failed job exactly (the resolved command line, with its seed and "
         "overrides).\n\n";
    for (const ReportEntry& e : r.entries) {
      if (!e.result || !is_failure(e.result->status)) continue;
      const Result& res = *e.result;
      o += "### " + e.job.id + " (" + status_name(res.status) +
           (res.signal ? ", " + signal_name(res.signal) : res.status == Status::timeout ? "" : ", exit " + std::to_string(res.exit_code)) +
           ")\n\n";
      if (!res.first_line.empty()) o += "- first failing line: " + md_code(res.first_line) + "\n";
      if (!res.reason.empty()) o += "- reason: " + md_cell(res.reason) + "\n";
      if (!e.job.arch.empty()) o += "- arch: " + md_code(arch_text(e)) + "\n";
      if (!e.job.params.empty()) o += "- point: " + md_cell(params_text(e)) + "\n";
      o += "- log: " + md_code(log_path(e)) + "\n- defined at: " + md_code(e.job.source) + "\n\n";
      o += "```sh\n" + replay_of(e) + "\n```\n\n";
    }
  }
  o += "## Jobs\n\n| job | kind | status | seconds | signature |\n|---|---|---|---:|---|\n";
  for (const ReportEntry& e : r.entries) {
    std::string sig = e.result ? (e.result->status == Status::skipped ? e.result->reason : e.result->signature) : "";
    o += "| " + md_cell(e.job.id) + " | " + md_cell(e.job.kind) + " | " + status_of(e) + " | " +
         (e.result ? format_seconds(e.result->seconds) : "") + " | " + md_code(sig) + " |\n";
  }
  return o;
}

std::string summary_csv(const Report& r) {
  std::string o = "id,kind,status,exit_code,signal,seconds,seed";
  for (const std::string& p : r.param_names) o += "," + csv_field(p);
  o += ",signature,first_failing_line,log,replay\n";
  for (const ReportEntry& e : r.entries) {
    const Result* res = e.result ? &*e.result : nullptr;
    o += csv_field(e.job.id) + "," + csv_field(e.job.kind) + "," + status_of(e) + "," +
         (res && res->exit_code >= 0 ? std::to_string(res->exit_code) : "") + "," +
         (res && res->signal ? signal_name(res->signal) : "") + "," + (res ? format_seconds(res->seconds) : "") + "," +
         (e.job.seed ? std::to_string(*e.job.seed) : "");
    for (const std::string& p : r.param_names) {
      std::string v;
      for (const auto& [k, val] : e.job.params)
        if (k == p) v = val;
      o += "," + csv_field(v);
    }
    o += "," + csv_field(res ? res->signature : "") + "," + csv_field(res ? res->first_line : "") + "," +
         csv_field(log_path(e)) + "," + csv_field(e.job.replay.empty() ? "" : replay_of(e)) + "\n";
  }
  return o;
}

std::string failures_csv(const Report& r) {
  std::string o = "count,status,signature,jobs,replay_first\n";
  for (const Group& g : groups(r)) {
    std::string ids;
    for (const ReportEntry* e : g.jobs) ids += (ids.empty() ? "" : " ") + e->job.id;
    o += std::to_string(g.jobs.size()) + "," + g.status + "," + csv_field(g.signature) + "," + csv_field(ids) + "," +
         csv_field(replay_of(*g.jobs.front())) + "\n";
  }
  return o;
}

std::string sweep_csv(const Report& r) {
  std::vector<std::string> keys;
  std::set<std::string> seen;
  for (const ReportEntry& e : r.entries)
    if (e.result)
      for (const auto& [k, v] : e.result->summary)
        if (seen.insert(k).second) keys.push_back(k);
  std::string o = "point";
  for (const std::string& p : r.param_names) o += "," + csv_field(p);
  o += ",status";
  // A statistic named like a parameter (a sweep over `sms`) keeps its value under "summary.NAME":
  // one column per name, as CSV readers keep only one of two equal names.
  const std::set<std::string> params(r.param_names.begin(), r.param_names.end());
  for (const std::string& k : keys) o += "," + csv_field(params.count(k) ? "summary." + k : k);
  o += "\n";
  for (const ReportEntry& e : r.entries) {
    o += csv_field(e.job.id);
    for (const std::string& p : r.param_names) {
      std::string v;
      for (const auto& [k, val] : e.job.params)
        if (k == p) v = val;
      o += "," + csv_field(v);
    }
    o += "," + status_of(e);
    for (const std::string& k : keys) {
      std::string v;
      if (e.result)
        for (const auto& [kk, vv] : e.result->summary)
          if (kk == k) v = vv;
      o += "," + csv_field(v);
    }
    o += "\n";
  }
  return o;
}

void write_reports(const Report& r, const std::string& out_dir, const std::string& junit_path,
                   const std::string& csv_path) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  const fs::path d(out_dir);
  const std::string junit = junit_xml(r);
  write_file_atomic((d / "summary.md").string(), summary_markdown(r));
  write_file_atomic((d / "summary.csv").string(), summary_csv(r));
  write_file_atomic((d / "failures.csv").string(), failures_csv(r));
  write_file_atomic((d / "junit.xml").string(), junit);
  if (!junit_path.empty()) {
    if (fs::path(junit_path).has_parent_path()) fs::create_directories(fs::path(junit_path).parent_path(), ec);
    write_file_atomic(junit_path, junit);
  }
  if (r.mode == "sweep") {
    const std::string csv = sweep_csv(r);
    write_file_atomic((d / "sweep.csv").string(), csv);
    if (!csv_path.empty()) {
      if (fs::path(csv_path).has_parent_path()) fs::create_directories(fs::path(csv_path).parent_path(), ec);
      write_file_atomic(csv_path, csv);
    }
  }
}

void print_summary(std::FILE* out, const Report& r, const std::string& out_dir) {
  const Counts c = count(r);
  for (const ReportEntry& e : r.entries) {
    if (!e.result || !is_failure(e.result->status)) continue;
    // The job's own first failing line, numbers and names as it wrote them; the signature that
    // buckets it (digits as #) is for the grouping below.
    const std::string& line = e.result->first_line.empty() ? e.result->signature : e.result->first_line;
    std::fprintf(out, "FAILED %s (%s): %s\n  replay: %s\n", e.job.id.c_str(), status_name(e.result->status),
                 line.c_str(), replay_of(e).c_str());
  }
  const std::vector<Group> gs = groups(r);
  if (!gs.empty()) {
    std::fprintf(out, "failures by signature:\n");
    for (const Group& g : gs)
      std::fprintf(out, "  %4zu  %-8s %s\n", g.jobs.size(), g.status.c_str(), g.signature.c_str());
  }
  if (r.interrupted)
    std::fprintf(out, "interrupted: %zu jobs did not run; resume with: tma-sim %s --resume %s\n", c.not_run,
                 r.mode == "sweep" ? "sweep" : "regress", r.location.c_str());
  std::fprintf(out, "reports: %s/{summary.md,summary.csv,failures.csv,junit.xml%s}\n", out_dir.c_str(),
               r.mode == "sweep" ? ",sweep.csv" : "");
  std::fprintf(out, "%s\n", counts_text(c).c_str());
}

}  // namespace tma::regress
