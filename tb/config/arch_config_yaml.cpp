#include "tma/config/arch_config_yaml.h"

#include <cstdio>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "tma/config/cli_args.h"
#include "tma/config/paths.h"
#include "tma/config/yaml_reader.h"
#include "tma/memory/gpc_coalescer.h"

namespace tma {

namespace {

// One table describes every field once: its YAML path, its range, and where it lives.
struct Field {
  const char* path;
  double min, max;
  std::function<double&(ArchConfig&)> dbl;   // for double fields
  std::function<uint32_t&(ArchConfig&)> u32; // for 32-bit fields
  std::function<uint64_t&(ArchConfig&)> u64; // for 64-bit fields
};

#define F_U32(path, lo, hi, member) Field{path, lo, hi, nullptr, [](ArchConfig& a) -> uint32_t& { return a.member; }, nullptr}
#define F_U64(path, lo, hi, member) Field{path, lo, hi, nullptr, nullptr, [](ArchConfig& a) -> uint64_t& { return a.member; }}
#define F_DBL(path, lo, hi, member) Field{path, lo, hi, [](ArchConfig& a) -> double& { return a.member; }, nullptr, nullptr}

const std::vector<Field>& fields() {
  static const std::vector<Field> f = {
      F_U32("sm_count", 1, 1024, sm_count),
      F_DBL("sm_clock_mhz", 1, 10000, sm_clock_mhz),
      F_U32("sm.mma_flops_per_cycle_bf16", 1, 1 << 24, sm.mma_flops_per_cycle_bf16),
      F_U32("sm.mma_flops_per_cycle_fp8", 1, 1 << 24, sm.mma_flops_per_cycle_fp8),
      F_U32("sm.mma_flops_per_cycle_tf32", 1, 1 << 24, sm.mma_flops_per_cycle_tf32),
      F_U32("sm.max_ctas_per_sm", 1, 255, sm.max_ctas_per_sm),
      F_U32("sm.sub_partitions", 1, 16, sm.sub_partitions),
      F_U32("tma.command_queue_depth", 1, 1024, tma.command_queue_depth),
      F_U32("tma.max_inflight_ops", 1, 1024, tma.max_inflight_ops),
      F_U32("tma.command_setup_cycles", 0, 100000, tma.command_setup_cycles),
      F_U32("tma.agu_requests_per_cycle", 1, 64, tma.agu_requests_per_cycle),
      F_U32("tma.max_outstanding_requests", 1, 65536, tma.max_outstanding_requests),
      F_U32("tma.cpc_outstanding_requests", 0, 1 << 24, tma.cpc_outstanding_requests),
      F_U32("tma.completion_latency", 0, 100000, tma.completion_latency),
      F_U32("tma.store_setup_cycles", 0, 100000, tma.store_setup_cycles),
      F_U32("descriptor_cache.entries", 1, 65536, descriptor_cache.entries),
      F_U32("descriptor_cache.ways", 1, 65536, descriptor_cache.ways),
      F_U32("descriptor_cache.hit_latency", 0, 100000, descriptor_cache.hit_latency),
      F_U32("descriptor_cache.l2_entries", 0, 65536, descriptor_cache.l2_entries),
      F_U32("descriptor_cache.l2_hit_latency", 0, 100000, descriptor_cache.l2_hit_latency),
      F_U32("descriptor_cache.fetch_latency", 0, 100000, descriptor_cache.fetch_latency),
      F_U32("descriptor_cache.sm_l1_entries", 0, 1u << 20, descriptor_cache.sm_l1_entries),
      F_U32("descriptor_cache.sm_l1_hit_latency", 0, 100000, descriptor_cache.sm_l1_hit_latency),
      F_U32("descriptor_cache.param_fetch_latency", 0, 100000, descriptor_cache.param_fetch_latency),
      F_U32("smem.capacity_bytes", 1024, 1 << 24, smem.capacity_bytes),
      F_U32("smem.banks", 1, 64, smem.banks),
      F_U32("smem.bank_bytes", 1, 64, smem.bank_bytes),
      F_U32("smem.write_bytes_per_cycle", 1, 4096, smem.write_bytes_per_cycle),
      F_U32("smem.read_bytes_per_cycle", 1, 4096, smem.read_bytes_per_cycle),
      F_U32("smem.lsu_bytes_per_cycle", 1, 4096, smem.lsu_bytes_per_cycle),
      F_U32("smem.crossbar_latency", 0, 100000, smem.crossbar_latency),
      F_U32("smem.max_cta_bytes", 1024, 1 << 24, smem.max_cta_bytes),
      F_U32("smem.reserved_per_cta_bytes", 0, 1 << 24, smem.reserved_per_cta_bytes),
      F_U64("l2.capacity_bytes", 4096, 1ull << 40, l2.capacity_bytes),
      F_U32("l2.line_bytes", 32, 4096, l2.line_bytes),
      F_U32("l2.sector_bytes", 8, 4096, l2.sector_bytes),
      F_U32("l2.ways", 1, 1024, l2.ways),
      F_U32("l2.fetch_granularity_bytes", 8, 4096, l2.fetch_granularity_bytes),
      F_U32("l2.hit_latency", 0, 100000, l2.hit_latency),
      F_U32("l2.bytes_per_cycle", 1, 1 << 20, l2.bytes_per_cycle),
      F_U32("l2.sm_port_bytes_per_cycle", 1, 1 << 20, l2.sm_port_bytes_per_cycle),
      F_U32("l2.sm_write_bytes_per_cycle", 1, 1 << 20, l2.sm_write_bytes_per_cycle),
      F_DBL("l2.sm_reduce_bytes_per_cycle", 0.001, 1 << 20, l2.sm_reduce_bytes_per_cycle),
      F_U32("l2.write_bytes_per_cycle", 1, 1 << 20, l2.write_bytes_per_cycle),
      F_U32("l2.write_ack_latency", 0, 100000, l2.write_ack_latency),
      F_U32("l2.reduction_bytes_per_cycle", 1, 1 << 20, l2.reduction_bytes_per_cycle),
      F_U32("l2.reduction_latency", 0, 100000, l2.reduction_latency),
      F_U32("l2.reduction_miss_bytes_per_cycle", 1, 1 << 20, l2.reduction_miss_bytes_per_cycle),
      F_U32("l2.request_overhead_cycles", 0, 100000, l2.request_overhead_cycles),
      F_U32("l2.in_order_slices", 0, 4096, l2.in_order_slices),
      F_U32("l2.in_order_until_dram_slot", 0, 1, l2.in_order_until_dram_slot),
      F_DBL("l2.tag_lookups_per_cycle", 0, 1e6, l2.tag_lookups_per_cycle),
      F_DBL("l2.requests_per_cycle", 0, 1e6, l2.requests_per_cycle),
      F_U32("l2.partitions", 1, 2, l2.partitions),
      F_U32("l2.far_latency", 0, 100000, l2.far_latency),
      F_U32("l2.promoted_detour_cycles", 0, 100000, l2.promoted_detour_cycles),
      F_DBL("l2.promoted_detour_share", 0, 1, l2.promoted_detour_share),
      F_U32("l2.crossbar_bytes_per_cycle", 1, 1 << 20, l2.crossbar_bytes_per_cycle),
      F_U32("l2.far_read_takes_span", 0, 1, l2.far_read_takes_span),
      F_U64("l2.dirty_launch_bytes", 0, 1ull << 40, l2.dirty_launch_bytes),
      F_U32("l2.gpc_sms", 1, 1024, l2.gpc_sms),
      F_U32("l2.gpc_coalesce_window_cycles", 0, 1000000, l2.gpc_coalesce_window_cycles),
      F_U32("l2.gpc_coalesce_entries", 4, 1u << 22, l2.gpc_coalesce_entries),
      F_U32("l2.gpc_coalesce_readers", 0, 255, l2.gpc_coalesce_readers),
      F_U32("l2.gpc_coalesce_hit_window_cycles", 0, 0xFFFFFFFFu, l2.gpc_coalesce_hit_window_cycles),
      F_DBL("dram.bytes_per_cycle", 0.001, 1e6, dram.bytes_per_cycle),
      F_U32("dram.latency", 0, 1000000, dram.latency),
      F_U32("dram.channels", 1, 4096, dram.channels),
      F_U32("dram.banks", 1, 1024, dram.banks),
      F_U32("dram.interleave_bytes", 32, 1 << 20, dram.interleave_bytes),
      F_U32("dram.page_bytes", 32, 1 << 20, dram.page_bytes),
      F_U32("dram.row_miss_cycles", 0, 100000, dram.row_miss_cycles),
      F_U32("dram.scheduler_window_cycles", 0, 1000000, dram.scheduler_window_cycles),
      F_U32("dram.page_tenure", 0, 1, dram.page_tenure),
      F_DBL("dram.bank_bytes_per_cycle", 0, 1e6, dram.bank_bytes_per_cycle),
      F_U32("dram.background_promoted_fills", 0, 1, dram.background_promoted_fills),
      F_U32("dram.background_max_wait_cycles", 0, 10000000, dram.background_max_wait_cycles),
      F_U32("dram.access_overhead_bytes", 0, 4096, dram.access_overhead_bytes),
      F_DBL("dram.activations_per_cycle", 0, 1e6, dram.activations_per_cycle),
      F_DBL("dram.slow_read_fraction", 0, 1, dram.slow_read_fraction),
      F_U32("dram.slow_read_extra_cycles", 0, 1000000, dram.slow_read_extra_cycles),
      F_U32("cluster.multicast_occupancy_cycles", 0, 1000000, cluster.multicast_occupancy_cycles),
      F_DBL("cluster.multicast_bytes_per_cycle", 0.001, 1e6, cluster.multicast_bytes_per_cycle),
      F_U32("cluster.multicast_inflight_per_sm", 1, 1024, cluster.multicast_inflight_per_sm),
      F_U32("launch.overhead_ns", 0, 100000000, launch.overhead_ns),
      F_U32("launch.cta_dispatch_ns", 0, 100000000, launch.cta_dispatch_ns),
      F_U32("sim.quantum_cycles", 1, 1000000, sim.quantum_cycles),
      F_U32("sim.bandwidth_window_cycles", 1, 1000000, sim.bandwidth_window_cycles),
  };
  return f;
}

void set_field(const Field& f, ArchConfig& a, double v) {
  if (f.dbl) f.dbl(a) = v;
  else if (f.u32) f.u32(a) = static_cast<uint32_t>(v);
  else f.u64(a) = static_cast<uint64_t>(v);
}

double get_field(const Field& f, ArchConfig& a) {
  if (f.dbl) return f.dbl(a);
  if (f.u32) return f.u32(a);
  return static_cast<double>(f.u64(a));
}

YamlField at_path(const YamlField& root, const std::string& path) {
  YamlField node = root;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    node = node[path.substr(start, dot == std::string::npos ? std::string::npos : dot - start)];
    if (dot == std::string::npos) return node;
    start = dot + 1;
  }
}

// The first rule across fields that `a` breaks: the field's path and the rule with the value;
// none when it keeps them all. Checked after a file is read and after overrides.
std::optional<std::pair<std::string, std::string>> consistency_error(const ArchConfig& a) {
  if (a.l2.line_bytes % a.l2.sector_bytes || a.l2.line_bytes / a.l2.sector_bytes > 8)
    return std::make_pair("l2.sector_bytes", "line_bytes (" + std::to_string(a.l2.line_bytes) +
                                                 ") must be a multiple of sector_bytes (" +
                                                 std::to_string(a.l2.sector_bytes) + "), at most 8 sectors a line");
  const uint32_t fetch = a.l2.fetch_granularity_bytes;
  if (fetch % a.l2.sector_bytes || a.l2.line_bytes % fetch || (fetch & (fetch - 1)))
    return std::make_pair("l2.fetch_granularity_bytes",
                          "fetch_granularity_bytes must be a power of two, a multiple of sector_bytes that divides "
                          "line_bytes (got " + std::to_string(fetch) + ")");
  if (!a.l2.sm_partition.empty() && a.l2.sm_partition.size() < a.sm_count)
    return std::make_pair("l2.sm_partition", "names the partition of " + std::to_string(a.l2.sm_partition.size()) +
                                                 " SMs; sm_count is " + std::to_string(a.sm_count));
  for (uint32_t p : a.l2.sm_partition)
    if (p >= a.l2.partitions)
      return std::make_pair("l2.sm_partition", "partition " + std::to_string(p) + " of an SM is not below partitions (" +
                                                   std::to_string(a.l2.partitions) + ")");
  if (a.tma.cpc_outstanding_requests && a.tma.cpc_of_sm.size() < a.sm_count)
    return std::make_pair("tma.cpc_of_sm", "names the CPC of " + std::to_string(a.tma.cpc_of_sm.size()) +
                                               " SMs; sm_count is " + std::to_string(a.sm_count));
  if (!GpcCoalescer::valid_capacity(a.l2.gpc_coalesce_entries))
    return std::make_pair("l2.gpc_coalesce_entries", "must be a power of two of at least " +
                                                         std::to_string(GpcCoalescer::kWays) + " (got " +
                                                         std::to_string(a.l2.gpc_coalesce_entries) + ")");
  if (a.smem.banks * a.smem.bank_bytes > 64 * 64)
    return std::make_pair("smem.banks", "banks x bank_bytes (" + std::to_string(a.smem.banks * a.smem.bank_bytes) +
                                            ") is too large (at most 4096)");
  return std::nullopt;
}

}  // namespace

ArchConfig load_arch_config(const std::string& path) {
  YamlDoc doc = YamlDoc::load(path);
  YamlField root = doc.root();
  root.check_keys({"name", "description", "sm_count", "sm_clock_mhz", "sm", "tma", "descriptor_cache", "smem", "l2",
                   "dram", "cluster", "launch", "sim"});
  ArchConfig a;
  a.source_file = path;
  a.name = root["name"].as_string();
  // Every section's keys are checked, and every field is required: an architecture file says
  // each number and where it came from.
  for (const char* section : {"sm", "tma", "descriptor_cache", "smem", "l2", "dram", "cluster", "launch", "sim"}) {
    std::vector<std::string> keys;
    const std::string prefix = std::string(section) + ".";
    for (const Field& f : fields())
      if (std::string(f.path).rfind(prefix, 0) == 0) keys.push_back(std::string(f.path).substr(prefix.size()));
    if (std::string(section) == "l2") keys.push_back("sm_partition");  // lists, read below
    if (std::string(section) == "tma") keys.push_back("cpc_of_sm");
    root[section].check_keys(keys);
  }
  for (const Field& f : fields()) {
    YamlField node = at_path(root, f.path);
    set_field(f, a, f.dbl ? node.as_double(f.min, f.max)
                          : static_cast<double>(node.as_uint64(static_cast<uint64_t>(f.min), static_cast<uint64_t>(f.max))));
  }
  // Required like every field: the near partition of each SM, as silicon numbers them.
  for (uint64_t p : root["l2"]["sm_partition"].as_uint64_list(1, 4096, 0, 1023))
    a.l2.sm_partition.push_back(static_cast<uint32_t>(p));
  // And each SM's CPC (used when tma.cpc_outstanding_requests is not 0).
  for (uint64_t c : root["tma"]["cpc_of_sm"].as_uint64_list(1, 4096, 0, 1023))
    a.tma.cpc_of_sm.push_back(static_cast<uint32_t>(c));
  if (const auto e = consistency_error(a)) throw at_path(root, e->first).error(e->second);
  return a;
}

void apply_arch_overrides(ArchConfig& arch, const std::vector<std::string>& overrides) {
  for (const std::string& o : overrides) {
    const size_t eq = o.find('=');
    if (eq == std::string::npos) throw std::runtime_error("override '" + o + "' is not of the form field=value");
    const std::string name = o.substr(0, eq), value = o.substr(eq + 1);
    const Field* found = nullptr;
    for (const Field& f : fields())
      if (name == f.path) found = &f;
    if (!found) throw std::runtime_error("override '" + o + "': no architecture field '" + name + "'");
    // The command line's strict numbers: the whole value, in the field's range (no NaN, no
    // fraction for a whole-number field).
    const std::string what = "override '" + o + "'";
    const double v = found->dbl ? cli::parse_double(what, value, found->min, found->max)
                                : static_cast<double>(cli::parse_uint(what, value, static_cast<uint64_t>(found->min),
                                                                      static_cast<uint64_t>(found->max)));
    set_field(*found, arch, v);
  }
  if (const auto e = consistency_error(arch))
    throw std::runtime_error("architecture overrides: " + e->first + ": " + e->second);
}

std::vector<std::pair<std::string, std::string>> arch_fields(const ArchConfig& arch) {
  std::vector<std::pair<std::string, std::string>> out;
  ArchConfig a = arch;
  for (const Field& f : fields()) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.10g", get_field(f, a));
    out.emplace_back(f.path, buf);
  }
  // The lists as flow sequences ([0, 0, 1, ...]: JSON and YAML alike), after their section's other fields.
  auto insert_list = [&out](const std::string& path, const std::vector<uint32_t>& values) {
    std::string items;
    for (uint32_t v : values) items += (items.empty() ? "" : ", ") + std::to_string(v);
    const std::string section = path.substr(0, path.find('.') + 1);
    size_t after = 0;
    for (size_t i = 0; i < out.size(); ++i)
      if (out[i].first.rfind(section, 0) == 0) after = i + 1;
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(after), {path, "[" + items + "]"});
  };
  insert_list("tma.cpc_of_sm", arch.tma.cpc_of_sm);
  insert_list("l2.sm_partition", arch.l2.sm_partition);
  return out;
}

ArchConfig load_arch_for_command(const std::string& path, const std::string& fallback,
                                 const std::vector<std::string>& overrides) {
  ArchConfig arch = load_arch_config(resolve_project_path(path.empty() ? fallback : path));
  apply_arch_overrides(arch, overrides);
  return arch;
}

}  // namespace tma
