#include "tma/scenario/perfetto_trace.h"

#include <cinttypes>

namespace tma {

namespace {
const char* access_name(MemAccess a) {
  switch (a) {
    case MemAccess::read: return "read";
    case MemAccess::write: return "write";
    case MemAccess::reduce: return "reduce";
    case MemAccess::prefetch: return "prefetch";
    case MemAccess::descriptor: return "descriptor";
  }
  return "?";
}
}  // namespace

PerfettoTrace::PerfettoTrace(const std::string& path, double clock_mhz, uint64_t max_request_events)
    : file_(std::fopen(path.c_str(), "w")), ns_per_cycle_(1000.0 / clock_mhz), max_requests_(max_request_events) {
  if (file_) std::fputs("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n", file_);
}

PerfettoTrace::~PerfettoTrace() {
  if (!file_) return;
  // The cap and what it dropped, twice: in a metadata event (in the trace's own event list) and
  // in the top-level "metadata" object (Chrome and Perfetto show it as the trace's metadata).
  char counts[256];
  std::snprintf(counts, sizeof counts,
                "\"l2_request_events\": %" PRIu64 ", \"l2_request_events_dropped\": %" PRIu64
                ", \"max_l2_request_events\": %" PRIu64,
                requests_, dropped(), max_requests_);
  std::fprintf(file_, "%s{\"name\": \"trace_info\", \"ph\": \"M\", \"pid\": 0, \"args\": {%s}}\n],\n\"metadata\": {%s}}\n",
               events_ ? ",\n" : "", counts, counts);
  std::fclose(file_);
}

void PerfettoTrace::event(const char* name, const char* cat, int pid, int tid, uint64_t start, uint64_t end,
                          const std::string& args) {
  std::fprintf(file_, "%s{\"name\": \"%s\", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": %d, \"tid\": %d, \"ts\": %.3f, "
                      "\"dur\": %.3f, \"args\": {%s}}",
               events_++ ? ",\n" : "", name, cat, pid, tid, start * ns_per_cycle_ / 1000.0,
               (end > start ? end - start : 0) * ns_per_cycle_ / 1000.0, args.c_str());
}

void PerfettoTrace::name_track(int sm) {
  if (static_cast<size_t>(sm) >= named_.size()) named_.resize(sm + 1, false);
  if (named_[sm]) return;
  named_[sm] = true;
  std::fprintf(file_, "%s{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"args\": {\"name\": \"SM %d\"}},\n"
                      "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 0, \"args\": {\"name\": \"TMA operations\"}},\n"
                      "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 1, \"args\": {\"name\": \"L2 requests\"}}",
               events_++ ? ",\n" : "", sm, sm, sm, sm);
}

void PerfettoTrace::op_finished(int sm, const OpRecord& rec) {
  if (!file_) return;
  ++ops_;
  name_track(sm);
  char args[256];
  std::snprintf(args, sizeof args,
                "\"op_id\": %" PRIu64 ", \"tx_bytes\": %u, \"requests\": %u, \"descriptor_hit\": %s, \"outcome\": \"%s\"",
                rec.cmd.op_id, rec.tx_bytes, rec.global_requests, rec.descriptor_hit ? "true" : "false",
                rec.outcome == OpOutcome::ok ? "ok" : "fault");
  const std::string name = rec.cmd.kind == UnitCommandKind::tensor_op ? op_name(rec.cmd.op) : "descriptor";
  event(name.c_str(), "op", sm, 0, rec.issue_cycle, rec.done_cycle, args);
}

void PerfettoTrace::l2_request(int sm, uint64_t op_id, uint64_t address, uint32_t bytes, MemAccess access,
                               uint64_t issue_cycle, uint64_t done_cycle) {
  if (!file_ || (++requests_ > max_requests_ && max_requests_)) return;
  name_track(sm);
  char args[160];
  std::snprintf(args, sizeof args, "\"op_id\": %" PRIu64 ", \"address\": \"0x%" PRIx64 "\", \"bytes\": %u", op_id,
                address, bytes);
  event(access_name(access), "l2", sm, 1, issue_cycle, done_cycle, args);
}

}  // namespace tma
