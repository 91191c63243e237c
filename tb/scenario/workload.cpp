#include "tma/scenario/workload.h"

#include <algorithm>
#include <stdexcept>

#include "tma/scenario/tile_schedule.h"

namespace tma {

namespace {

uint64_t div_up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
uint64_t align_up(uint64_t a, uint64_t b) { return div_up(a, b) * b; }

IssueOp make_op(const ScenarioDescriptor& d, OpKind kind, std::vector<int64_t> coords, uint32_t smem,
                ReduceOp reduce = ReduceOp::add) {
  IssueOp o;
  o.cmd.kind = UnitCommandKind::tensor_op;
  o.cmd.descriptor_address = d.address;
  o.cmd.descriptor_in_param = d.kernel_param;
  o.cmd.op.kind = kind;
  o.cmd.op.reduce = reduce;
  for (size_t i = 0; i < coords.size() && i < 5; ++i) o.cmd.op.coords[i] = static_cast<int32_t>(coords[i]);
  o.cmd.op.smem_addr = smem;
  return o;
}

const ScenarioDescriptor& desc(const Scenario& s, const std::string& name) { return s.descriptors.at(name); }

// The consumer's view of a loaded box: rows of inner bytes at the padded pitch.
TileRead tile_read(const TensorMap& m, uint32_t smem) {
  TileRead r;
  r.smem_addr = smem;
  const uint64_t bytes = box_smem_bytes(m);
  const uint32_t inner = m.mode == TensorMode::im2col ? m.channels_per_pixel * element_bytes(m.dtype)
                                                      : m.box[0] * element_bytes(m.dtype);
  const uint32_t span = swizzle_span(m.swizzle);
  r.row_bytes = inner;
  r.pitch = (m.interleave == Interleave::none && span && inner < span) ? span : inner;
  r.rows = static_cast<uint32_t>(bytes / std::max<uint32_t>(1, r.pitch));
  r.swizzle = m.swizzle;
  r.atom = m.swizzle_atom;
  return r;
}

// Adds the reads of every load of the step, when the workload asks for them.
void add_reads(const Scenario& s, Step& st) {
  if (!s.workload.consumer_reads) return;
  for (const IssueOp& op : st.loads) {
    for (const auto& [name, d] : s.descriptors)
      if (d.address == op.cmd.descriptor_address) st.reads.push_back(tile_read(d.map, op.cmd.op.smem_addr));
  }
}

// A place in a schedule's order that holds no work item (CUTLASS's swizzle padding).
constexpr int64_t kPadding = -1;

// The output tiles of a tiles_m x tiles_n problem in the schedule's order, as indices m * tiles_n + n.
std::vector<int64_t> tile_order(uint64_t tiles_m, uint64_t tiles_n, const TileSchedule& schedule) {
  std::vector<int64_t> order;
  for (const OutputTile& t : schedule_tiles(tiles_m, tiles_n, schedule))
    order.push_back(t.padding ? kPadding : static_cast<int64_t>(t.m * tiles_n + t.n));
  return order;
}

// Work items in the order the grid takes them dealt to CTAs. `share` CTAs (a cluster whose CTAs
// all run each item: multicast) take every item together; with share = 1 each CTA takes its own.
// emit(program, item, cta_in_share) appends an item's steps to a CTA's program.
//   - persistent: one CTA per SM; the groups of `share` SMs take places g, g + groups, ... of the
//     order (CUTLASS's and Triton's persistent kernels: CTA b walks b, b + grid, ...);
//     max_tiles_per_sm caps each group.
//   - not persistent: one CTA per item (per sharing CTA), in grid order; the first wave goes to
//     SMs 0, 1, ... and, without clusters, every later CTA to the first SM that frees (kAnySm);
//     with clusters the waves are dealt statically (CTA e on SM e % sms). max_tiles_per_sm caps
//     the grid at that many items per group.
// The places of the order that go to each of `groups` CTAs (or clusters) of a persistent grid:
// g, g + groups, ..., at most cap (0: no cap) items each.
std::vector<std::vector<int64_t>> persistent_deal(const std::vector<int64_t>& order, uint32_t groups, uint64_t cap) {
  std::vector<std::vector<int64_t>> out(groups);
  for (size_t t = 0; t < order.size(); ++t) {
    auto& g = out[t % groups];
    if (order[t] != kPadding && !(cap && g.size() >= cap)) g.push_back(order[t]);
  }
  return out;
}

// With `slots` CTAs per SM a persistent grid has sms x slots CTAs (CTA e on SM e % sms), each
// capped at max_tiles_per_sm / slots (rounded up: the SM's cap shared by its CTAs); the first wave
// of a grid in waves is sms x slots CTAs.
template <typename Emit>
Launch deal_work(const Scenario& s, const std::vector<int64_t>& order, bool persistent, uint32_t share, uint32_t slots,
                 Emit&& emit) {
  const uint64_t cap = s.workload.max_tiles_per_sm;
  const uint32_t groups = s.sms / share;
  Launch out;
  if (persistent) {
    const uint32_t grid = s.sms * slots;
    out.ctas.resize(grid);
    for (uint32_t e = 0; e < grid; ++e) out.sm.push_back(static_cast<int32_t>(e % s.sms));
    const auto dealt = persistent_deal(order, groups * slots, div_up(cap, slots));
    for (uint32_t g = 0; g < groups * slots; ++g)
      for (int64_t item : dealt[g])
        for (uint32_t c = 0; c < share; ++c) emit(out.ctas[g * share + c], item, c);
    return out;
  }
  uint64_t items = 0;
  for (int64_t item : order) {
    if (item == kPadding) continue;
    if (cap && items >= cap * groups) break;
    ++items;
    for (uint32_t c = 0; c < share; ++c) {
      const uint64_t e = out.ctas.size();
      out.ctas.emplace_back();
      emit(out.ctas.back(), item, c);
      out.sm.push_back(s.cluster_size == 1 && e >= uint64_t{s.sms} * slots ? kAnySm : static_cast<int32_t>(e % s.sms));
    }
  }
  return out;
}

// The consumer's time per step: compute_cycles when the scenario sets it, else the step's dense
// MMA flops at the SM's tensor-core rate for the workload's operand type (whole cycles, up).
uint32_t step_cycles(const Workload& w, const ArchConfig& arch, uint64_t flops) {
  if (w.compute_cycles) return *w.compute_cycles;
  const uint32_t rate = w.mma == MmaType::fp8    ? arch.sm.mma_flops_per_cycle_fp8
                        : w.mma == MmaType::tf32 ? arch.sm.mma_flops_per_cycle_tf32
                                                 : arch.sm.mma_flops_per_cycle_bf16;
  return static_cast<uint32_t>(std::min<uint64_t>(div_up(flops, rate), UINT32_MAX));
}

void check_fits(uint64_t bytes, const ArchConfig& arch, const char* what) {
  if (bytes > arch.smem.capacity_bytes)
    throw std::runtime_error(std::string(what) + " need " + std::to_string(bytes) +
                             " bytes of shared memory; the SM has " + std::to_string(arch.smem.capacity_bytes));
}

// A CTA's shared memory: its data (stages and buffers) and two mbarriers (full, empty) a stage.
uint64_t cta_smem(uint64_t data_bytes, uint32_t stages) { return data_bytes + 16ull * stages; }

// How many CTAs per SM, and where each slot's shared memory starts: 1024-byte aligned (the
// swizzle patterns' period) when the slots fit so, else 128-byte aligned, else packed.
void set_occupancy(Launch& l, uint32_t slots, uint64_t cta_bytes, const ArchConfig& arch) {
  l.ctas_per_sm = slots;
  l.cta_smem_bytes = cta_bytes;
  l.cta_smem_stride = static_cast<uint32_t>(cta_bytes);
  for (uint64_t a : {1024, 128}) {
    const uint64_t stride = align_up(cta_bytes, a);
    if (stride * (slots - 1) + cta_bytes <= arch.smem.capacity_bytes) {
      l.cta_smem_stride = static_cast<uint32_t>(stride);
      break;
    }
  }
}

// ---- GEMM: C[M,N] = A[M,K] B[K,N]; A's descriptor has box [tk, tm] over dims [K, M], B's [tk, tn] over [K, N].
Launch build_gemm(const Scenario& s, const ArchConfig& arch) {
  const Workload& w = s.workload;
  const ScenarioDescriptor& a = desc(s, w.a);
  const ScenarioDescriptor& b = desc(s, w.b);
  const uint64_t tk = a.map.box[0], tm = a.map.box[1], tn = b.map.box[1];
  if (b.map.box[0] != tk) throw std::runtime_error("gemm: A and B boxes must agree on the K tile");
  const uint64_t a_bytes = align_up(box_smem_bytes(a.map), 1024), b_bytes = align_up(box_smem_bytes(b.map), 1024);
  const uint64_t stage = a_bytes + b_bytes;
  uint64_t c_bytes = 0;
  if (!w.c.empty()) c_bytes = align_up(box_smem_bytes(desc(s, w.c).map), 1024);
  check_fits(stage * w.stages + c_bytes, arch, "gemm stages");
  const uint64_t cta_bytes = cta_smem(stage * w.stages + c_bytes, w.stages);
  const uint32_t slots = resolve_ctas_per_sm(w, arch, cta_bytes);
  const uint64_t mt = div_up(w.m, tm), nt = div_up(w.n, tn), kt = div_up(w.k, tk);
  const uint32_t cs = w.multicast_a ? s.cluster_size : 1;
  // With multicast the CTAs of a cluster share an A row block: a cluster takes cs adjacent N
  // tiles, and the schedule orders these cluster tiles.
  const uint64_t ngroups = div_up(nt, cs);
  const uint32_t compute = step_cycles(w, arch, 2 * tm * tn * tk);  // one K step of the output tile
  auto emit = [&](CtaProgram& p, int64_t item, uint32_t cta) {
    const uint64_t mi = static_cast<uint64_t>(item) / ngroups, nj = static_cast<uint64_t>(item) % ngroups * cs + cta;
    for (uint64_t kk = 0; kk < kt; ++kk) {
      Step st;
      const uint32_t base = static_cast<uint32_t>((p.steps.size() % w.stages) * stage);
      if (!w.multicast_a || cta == 0) {
        IssueOp op = make_op(a, OpKind::load, {static_cast<int64_t>(kk * tk), static_cast<int64_t>(mi * tm)}, base);
        if (w.multicast_a) op.cmd.cta_mask = static_cast<uint16_t>((1u << cs) - 1);
        st.loads.push_back(op);
      }
      st.loads.push_back(make_op(b, OpKind::load, {static_cast<int64_t>(kk * tk), static_cast<int64_t>(nj * tn)},
                                 base + static_cast<uint32_t>(a_bytes)));
      st.expected_completions = 2;  // A (own or multicast) and B
      st.compute_cycles = compute;
      add_reads(s, st);
      if (kk + 1 == kt && !w.c.empty()) {
        const ScenarioDescriptor& c = desc(s, w.c);
        st.after.push_back(make_op(c, OpKind::store,
                                   {static_cast<int64_t>(nj * c.map.box[0]), static_cast<int64_t>(mi * c.map.box[1])},
                                   static_cast<uint32_t>(stage * w.stages)));
      }
      p.steps.push_back(st);
    }
  };
  Launch launch = deal_work(s, tile_order(mt, ngroups, w.schedule), w.schedule.persistent, cs, slots, emit);
  set_occupancy(launch, slots, cta_bytes, arch);
  return launch;
}

// ---- Convolution as implicit GEMM: each step loads one im2col column of activation pixels
// (one filter tap, one channel block) and the matching filter tile.
Launch build_conv(const Scenario& s, const ArchConfig& arch) {
  const Workload& w = s.workload;
  const ScenarioDescriptor& x = desc(s, w.activation);
  const ScenarioDescriptor& f = desc(s, w.filter);
  const TensorMap& m = x.map;
  const int nsp = m.rank - 2;
  const uint64_t cpp = m.channels_per_pixel, ppc = m.pixels_per_column;
  // Output positions per spatial dimension: the bounding box [lower, dim-1+upper].
  std::vector<uint64_t> out(nsp);
  uint64_t per_image = 1;
  for (int d = 0; d < nsp; ++d) {
    const int64_t extent = static_cast<int64_t>(m.dims[d + 1]) + m.upper_corner[d] - m.lower_corner[d];
    if (extent <= 0) throw std::runtime_error("conv: the activation's bounding box is empty");
    out[d] = static_cast<uint64_t>(extent);
    per_image *= out[d];
  }
  const uint64_t pixels = per_image * m.dims[m.rank - 1];
  const uint64_t pixel_blocks = div_up(pixels, ppc);
  const uint64_t channel_blocks = div_up(m.dims[0], cpp);
  uint64_t taps = 1;
  for (uint32_t r : w.filter_size) taps *= r;
  const uint64_t x_bytes = align_up(box_smem_bytes(m), 1024), f_bytes = align_up(box_smem_bytes(f.map), 1024);
  const uint64_t stage = x_bytes + f_bytes;
  check_fits(stage * w.stages, arch, "conv stages");
  const uint64_t cta_bytes = cta_smem(stage * w.stages, w.stages);
  const uint32_t slots = resolve_ctas_per_sm(w, arch, cta_bytes);
  // The implicit GEMM's output tiles: M = pixel blocks, N = output channel tiles; a step multiplies
  // ppc pixels by cpp channels by the filter's K tile.
  const uint32_t compute = step_cycles(w, arch, 2 * ppc * cpp * f.map.box[1]);
  auto emit = [&](CtaProgram& p, int64_t item, uint32_t) {
    const uint64_t pb = static_cast<uint64_t>(item) / w.output_channel_tiles;
    const uint64_t ko = static_cast<uint64_t>(item) % w.output_channel_tiles;
    // The block's first output pixel, as im2col coordinates (W, H, D from the lower corner, then N).
    uint64_t lin = pb * ppc;
    std::vector<int64_t> start(m.rank, 0);
    for (int d = 0; d < nsp; ++d) {
      start[d + 1] = static_cast<int64_t>(lin % out[d]) + m.lower_corner[d];
      lin /= out[d];
    }
    start[m.rank - 1] = static_cast<int64_t>(lin);
    for (uint64_t tap = 0; tap < taps; ++tap) {
      for (uint64_t cb = 0; cb < channel_blocks; ++cb) {
        Step st;
        const uint32_t base = static_cast<uint32_t>((p.steps.size() % w.stages) * stage);
        std::vector<int64_t> coords = start;
        coords[0] = static_cast<int64_t>(cb * cpp);
        IssueOp xo = make_op(x, OpKind::load, coords, base);
        uint64_t t = tap;
        for (int d = 0; d < nsp; ++d) {
          xo.cmd.op.im2col_offsets[d] = static_cast<uint16_t>(t % w.filter_size[d]);
          t /= w.filter_size[d];
        }
        st.loads.push_back(xo);
        // Filter tensor [C, K, taps]: box [cpp, Ktile, 1].
        std::vector<int64_t> fc(f.map.rank, 0);
        fc[0] = static_cast<int64_t>(cb * cpp);
        if (f.map.rank > 1) fc[1] = static_cast<int64_t>(ko * f.map.box[1]);
        if (f.map.rank > 2) fc[2] = static_cast<int64_t>(tap);
        st.loads.push_back(make_op(f, OpKind::load, fc, base + static_cast<uint32_t>(x_bytes)));
        st.expected_completions = 2;
        st.compute_cycles = compute;
        add_reads(s, st);
        p.steps.push_back(st);
      }
    }
  };
  Launch launch =
      deal_work(s, tile_order(pixel_blocks, w.output_channel_tiles, w.schedule), w.schedule.persistent, 1, slots, emit);
  set_occupancy(launch, slots, cta_bytes, arch);
  return launch;
}

// ---- Attention, FlashAttention-3's forward pass: a work item is (batch, query-head group, query
// block, KV split). Its first step loads the Q tile (once: into its own buffer, after the last
// item's consumer is done with it) with the first K and V tiles; every step loads one K and one V
// tile (block_n x head_dim each) into the ring and computes QK^T and PV on them. Causal items skip
// the KV blocks past their last query row. Within an item the KV blocks come last to first, as
// FlashAttention-3 walks them.
struct AttentionItem {
  uint64_t batch, head, m_block, split;
};

Launch build_attention(const Scenario& s, const ArchConfig& arch) {
  const Workload& w = s.workload;
  const ScenarioDescriptor& q = desc(s, w.query);
  const ScenarioDescriptor& k = desc(s, w.key);
  const ScenarioDescriptor& v = desc(s, w.value);
  const uint64_t head_dim = q.map.dims[0], seq_q = q.map.dims[1], heads = q.map.dims[2], batch = q.map.dims[3];
  const uint64_t seq_kv = k.map.dims[1], kv_heads = k.map.dims[2];
  const uint64_t d = q.map.box[0], chunks = head_dim / d;  // boxes per tile along head_dim
  const uint64_t bm = q.map.box[1], hq = q.map.box[2], bn = k.map.box[1];
  const uint64_t group = heads / kv_heads;  // query heads per KV head
  const uint64_t m_blocks = div_up(seq_q, bm), kv_blocks = div_up(seq_kv, bn);
  const uint64_t per_split = div_up(kv_blocks, w.split_kv);
  const uint64_t q_box = align_up(box_smem_bytes(q.map), 1024), kv_box = align_up(box_smem_bytes(k.map), 1024);
  const uint64_t stage = 2 * chunks * kv_box;  // K and V
  const uint64_t q_base = stage * w.stages, o_base = q_base + chunks * q_box;
  check_fits(o_base + (w.out.empty() ? 0 : chunks * q_box), arch, "attention stages, Q and O");
  const uint64_t cta_bytes = cta_smem(o_base + (w.out.empty() ? 0 : chunks * q_box), w.stages);
  const uint32_t slots = resolve_ctas_per_sm(w, arch, cta_bytes);
  // QK^T and PV: 2 x 2 x rows x block_n x head_dim flops, on at least the 64 rows of a wgmma.
  const uint32_t compute = step_cycles(w, arch, 4 * std::max<uint64_t>(64, bm * hq) * bn * head_dim);
  // FlashAttention-3's persistent order: query block fastest (last to first when causal: the
  // longest items first), then head (and split, fastest within it), then batch.
  std::vector<AttentionItem> items;
  for (uint64_t b = 0; b < batch; ++b)
    for (uint64_t h = 0; h < heads; h += hq)
      for (uint64_t sp = 0; sp < w.split_kv; ++sp)
        for (uint64_t m = 0; m < m_blocks; ++m) items.push_back({b, h, w.causal ? m_blocks - 1 - m : m, sp});
  // The KV blocks an item reads: its split's share, below the causal diagonal (aligned to the
  // bottom right when seq_kv > seq_q).
  auto kv_range = [&](const AttentionItem& it) {
    uint64_t end = kv_blocks;
    if (w.causal) end = std::min(end, div_up(std::min(seq_kv, (it.m_block + 1) * bm + seq_kv - seq_q), bn));
    const uint64_t first = it.split * per_split;
    return std::make_pair(std::min(first, end), std::min(first + per_split, end));
  };
  auto tile = [&](const ScenarioDescriptor& t, uint64_t c, uint64_t row, uint64_t head, uint64_t b, uint32_t smem) {
    return make_op(t, OpKind::load,
                   {static_cast<int64_t>(c * d), static_cast<int64_t>(row), static_cast<int64_t>(head),
                    static_cast<int64_t>(b)},
                   smem);
  };
  auto emit = [&](CtaProgram& p, int64_t index, uint32_t) {
    const AttentionItem& it = items[static_cast<size_t>(index)];
    const uint64_t kv_head = it.head / group;
    const auto [first, end] = kv_range(it);
    for (uint64_t j = end; j-- > first;) {
      Step st;
      const uint32_t base = static_cast<uint32_t>((p.steps.size() % w.stages) * stage);
      for (uint64_t c = 0; c < chunks; ++c)
        st.loads.push_back(tile(k, c, j * bn, kv_head, it.batch, base + static_cast<uint32_t>(c * kv_box)));
      if (j + 1 == end) {  // the item's first step: Q too, once its buffer is free
        st.release_wait_from = static_cast<uint32_t>(st.loads.size());
        for (uint64_t c = 0; c < chunks; ++c)
          st.loads.push_back(tile(q, c, it.m_block * bm, it.head, it.batch, static_cast<uint32_t>(q_base + c * q_box)));
      }
      for (uint64_t c = 0; c < chunks; ++c)
        st.loads.push_back(tile(v, c, j * bn, kv_head, it.batch,
                                base + static_cast<uint32_t>((chunks + c) * kv_box)));
      st.expected_completions = static_cast<uint32_t>(st.loads.size());
      st.compute_cycles = compute;
      add_reads(s, st);
      if (j == first && !w.out.empty()) {  // the last step: the output tile goes out
        const ScenarioDescriptor& o = desc(s, w.out);
        for (uint64_t c = 0; c < chunks; ++c) {
          IssueOp op = tile(o, c, it.m_block * bm, it.head, it.batch * w.split_kv + it.split,
                            static_cast<uint32_t>(o_base + c * q_box));
          op.cmd.op.kind = OpKind::store;
          st.after.push_back(op);
        }
      }
      p.steps.push_back(st);
    }
  };
  std::vector<int64_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  Launch launch = deal_work(s, order, w.schedule.persistent, 1, slots, emit);
  set_occupancy(launch, slots, cta_bytes, arch);
  return launch;
}

// ---- Stream: every tile of a tensor (dimensions 0 and 1 tiled by the box), loaded, optionally
// written or reduced back through a second descriptor. Without `load` (a store-only stream) each
// step stores (or reduces) one tile from its stage, as it is, with at most `stages` bulk operations
// outstanding. With `multicast` the tiles are dealt to clusters and each one is loaded once into
// every CTA of its cluster.
Launch build_stream(const Scenario& s, const ArchConfig& arch) {
  const Workload& w = s.workload;
  const bool store_only = w.load.empty();
  // The tiles are those of the load's descriptor, or of the store's in a store-only stream.
  const ScenarioDescriptor& ld = desc(s, store_only ? w.store : w.load);
  const TensorMap& m = ld.map;
  const uint64_t stage = align_up(box_smem_bytes(m), 1024);
  check_fits(stage * w.stages, arch, "stream stages");
  const uint64_t cta_bytes = cta_smem(stage * w.stages, w.stages);
  const uint32_t slots = resolve_ctas_per_sm(w, arch, cta_bytes);
  const uint64_t span0 = static_cast<uint64_t>(m.box[0]) * (m.interleave == Interleave::none ? 1 : m.element_strides[0]);
  const uint64_t tx = div_up(m.dims[0], span0);
  const uint64_t ty = m.rank > 1 ? div_up(m.dims[1], static_cast<uint64_t>(m.box[1])) : 1;
  // Multicast: a cluster of cs CTAs takes the tiles one SM would (max_tiles_per_sm caps the cluster).
  const uint32_t cs = (w.multicast || w.shared_tiles) ? s.cluster_size : 1;
  ReduceOp red = ReduceOp::add;
  OpKind back = OpKind::store;
  if (!w.reduce_op.empty()) parse_op_name("reduce_" + w.reduce_op, back, red);
  // A persistent grid: each CTA (each cluster, with multicast or shared tiles) goes over its tiles
  // `passes` times; with N CTAs per SM, CTA e runs on SM e % sms and takes places e, e + grid, ...
  const uint32_t grid = s.sms * slots;
  const auto dealt = persistent_deal(tile_order(ty, tx, w.schedule), grid / cs, div_up(w.max_tiles_per_sm, slots));
  Launch launch;
  set_occupancy(launch, slots, cta_bytes, arch);
  launch.ctas.resize(grid);
  for (uint32_t e = 0; e < grid; ++e) {
    launch.sm.push_back(static_cast<int32_t>(e % s.sms));
    CtaProgram& p = launch.ctas[e];
    const uint32_t group = e / cs, cta = e % cs;
    for (uint32_t pass = 0; pass < w.passes; ++pass)
    for (int64_t item : dealt[group]) {
      const uint64_t y = static_cast<uint64_t>(item) / tx, x = static_cast<uint64_t>(item) % tx;
      Step st;
      const uint32_t base = static_cast<uint32_t>((p.steps.size() % w.stages) * stage);
      std::vector<int64_t> coords(m.rank, 0);
      coords[0] = static_cast<int64_t>(x * span0);
      if (m.rank > 1) coords[1] = static_cast<int64_t>(y * m.box[1]);
      st.compute_cycles = w.compute_cycles.value_or(0);
      if (store_only) {
        // As cp.async.bulk.wait_group.read (stages - 1) before a stage is reused: the store of step
        // i waits until at most stages - 1 earlier ones are incomplete (the model has no separate
        // "shared memory read done" event, so the store's completion stands for it).
        st.after.push_back(make_op(ld, back, coords, base, red));
        st.bulk_wait_pending = w.stages - 1;
        p.steps.push_back(st);
        continue;
      }
      if (w.multicast) {
        // Every CTA of the cluster runs the same steps; one of them issues the step's load to all.
        const uint32_t issuer = w.multicast_rotate ? static_cast<uint32_t>(p.steps.size() % cs) : 0;
        if (cta == issuer) {
          IssueOp op = make_op(ld, OpKind::load, coords, base);
          op.cmd.cta_mask = static_cast<uint16_t>((1u << cs) - 1);
          st.loads.push_back(op);
        }
        st.expected_completions = 1;  // its own load or the multicast of a peer
        if (w.consumer_reads) st.reads.push_back(tile_read(m, base));
        p.steps.push_back(st);
        continue;
      }
      st.loads.push_back(make_op(ld, OpKind::load, coords, base));
      st.expected_completions = 1;
      add_reads(s, st);
      if (!w.store.empty()) st.after.push_back(make_op(desc(s, w.store), back, coords, base, red));
      p.steps.push_back(st);
    }
  }
  return launch;
}

// ---- Ops: the listed operations one after another on every SM (each waits for the last).
Launch build_ops(const Scenario& s) {
  Launch launch;
  launch.ctas.resize(s.sms);
  for (uint32_t sm = 0; sm < s.sms; ++sm) {
    launch.sm.push_back(static_cast<int32_t>(sm));
    for (const ScenarioOp& o : s.workload.ops) {
      Step st;
      IssueOp op;
      op.cmd.descriptor_address = desc(s, o.descriptor).address;
      op.cmd.descriptor_in_param = desc(s, o.descriptor).kernel_param;
      op.cmd.op = o.op;
      if (o.op.kind == OpKind::load) {
        st.loads.push_back(op);
        st.expected_completions = 1;
      } else {
        st.after.push_back(op);  // stores, reductions and prefetches complete as bulk operations
        st.bulk_wait_after = true;  // and the next operation waits for them (wait_group 0)
      }
      st.compute_cycles = s.workload.compute_cycles.value_or(0);
      launch.ctas[sm].steps.push_back(st);
    }
  }
  return launch;
}

}  // namespace

uint32_t resolve_ctas_per_sm(const Workload& w, const ArchConfig& arch, uint64_t cta_smem_bytes) {
  const SmemConfig& m = arch.smem;
  const std::string need = std::to_string(cta_smem_bytes);
  if (cta_smem_bytes > m.max_cta_bytes)
    throw std::runtime_error("field 'workload.stages': a CTA of stages = " + std::to_string(w.stages) + " needs " + need +
                             " bytes of shared memory (stages, buffers and mbarriers); a CTA may have at most " +
                             std::to_string(m.max_cta_bytes) + " (smem.max_cta_bytes)");
  const uint64_t each = cta_smem_bytes + m.reserved_per_cta_bytes;
  const uint64_t fit = std::min<uint64_t>(arch.sm.max_ctas_per_sm, m.capacity_bytes / each);
  if (w.ctas_per_sm == 0) return static_cast<uint32_t>(std::max<uint64_t>(1, fit));
  if (w.ctas_per_sm > arch.sm.max_ctas_per_sm)
    throw std::runtime_error("field 'workload.ctas_per_sm': ctas_per_sm = " + std::to_string(w.ctas_per_sm) +
                             "; an SM runs at most " + std::to_string(arch.sm.max_ctas_per_sm) +
                             " CTAs at once (sm.max_ctas_per_sm)");
  if (w.ctas_per_sm * each > m.capacity_bytes)
    throw std::runtime_error("field 'workload.ctas_per_sm': ctas_per_sm = " + std::to_string(w.ctas_per_sm) +
                             " CTAs of " + need + " bytes of shared memory (+ " +
                             std::to_string(m.reserved_per_cta_bytes) + " reserved each) need " +
                             std::to_string(w.ctas_per_sm * each) + " bytes; the SM has " +
                             std::to_string(m.capacity_bytes) + " (smem.capacity_bytes): at most " + std::to_string(fit) +
                             " fit (ctas_per_sm: auto)");
  return w.ctas_per_sm;
}

uint64_t box_smem_bytes(const TensorMap& m) {
  const uint32_t span = swizzle_span(m.swizzle);
  auto padded = [&](uint64_t inner) {
    return (m.interleave == Interleave::none && span && inner < span) ? span : inner;
  };
  if (m.mode == TensorMode::im2col) return m.pixels_per_column * padded(uint64_t{m.channels_per_pixel} * element_bytes(m.dtype));
  const bool il = m.interleave != Interleave::none;
  const uint64_t unit = il ? (m.interleave == Interleave::b16 ? 16 : 32) : element_bytes(m.dtype);
  const uint64_t n0 = il ? div_up(m.box[0], m.element_strides[0]) : m.box[0];
  uint64_t rows = 1;
  for (int i = 1; i < m.rank; ++i)
    if (!(il && i == m.rank - 2)) rows *= div_up(m.box[i], m.element_strides[i]);
  return rows * padded(n0 * unit);
}

std::vector<std::string> scenario_warnings(const Scenario& s, const ArchConfig& arch) {
  std::vector<std::string> out;
  if (s.sms > arch.sm_count)
    out.push_back("scenario '" + s.name + "' runs on " + std::to_string(s.sms) + " SMs, more than the " +
                  std::to_string(arch.sm_count) + " of architecture '" + arch.name +
                  "' (sm_count); all of them are simulated (--set sms=" + std::to_string(arch.sm_count) +
                  " runs on the GPU's SMs)");
  return out;
}

Launch build_launch(const Scenario& s, const ArchConfig& arch) {
  Launch launch;
  switch (s.workload.kind) {
    case WorkloadKind::gemm: launch = build_gemm(s, arch); break;
    case WorkloadKind::conv: launch = build_conv(s, arch); break;
    case WorkloadKind::stream: launch = build_stream(s, arch); break;
    case WorkloadKind::ops: launch = build_ops(s); break;
    case WorkloadKind::attention: launch = build_attention(s, arch); break;
    case WorkloadKind::trace: throw std::runtime_error("a trace's CTAs come from its file (load_trace)");
  }
  launch.setup_cycles = s.workload.setup_cycles;
  launch.issue_cycles = s.workload.issue_cycles;
  launch.handoff_cycles = s.workload.handoff_cycles;
  launch.warps_per_cta = s.workload.warps_per_cta;
  // Every CTA prefetches the descriptors when it starts.
  if (s.workload.prefetch_descriptors) {
    for (CtaProgram& p : launch.ctas) {
      for (const auto& [name, d] : s.descriptors) {
        IssueOp op;
        op.cmd.kind = UnitCommandKind::prefetch_descriptor;
        op.cmd.descriptor_address = d.address;
        op.cmd.descriptor_in_param = d.kernel_param;
        p.prologue.push_back(op);
      }
    }
  }
  return launch;
}

std::vector<SmProgram> sm_programs(const Launch& launch, uint32_t sms) {
  const uint32_t slots = std::max<uint32_t>(1, launch.ctas_per_sm);
  std::vector<SmProgram> out(sms * slots);
  std::vector<bool> started(out.size(), false);
  std::vector<uint64_t> own(sms, 0);  // each SM's own CTAs so far: the next goes to slot own % slots
  uint64_t any = 0;
  for (size_t i = 0; i < launch.ctas.size(); ++i) {
    uint32_t sm;  // the program's index: slot x sms + SM
    if (launch.sm[i] == kAnySm) {
      sm = static_cast<uint32_t>(any++ % out.size());
    } else {
      const uint32_t at = static_cast<uint32_t>(launch.sm[i]);
      sm = static_cast<uint32_t>(own[at]++ % slots) * sms + at;
    }
    const CtaProgram& c = launch.ctas[i];
    // The SM's first CTA's prologue; those of its later CTAs are left out (what walks these
    // programs looks at the steps).
    if (!started[sm]) out[sm].prologue = c.prologue;
    started[sm] = true;
    out[sm].steps.insert(out[sm].steps.end(), c.steps.begin(), c.steps.end());
  }
  return out;
}

std::vector<SmProgram> build_programs(const Scenario& s, const ArchConfig& arch) {
  return sm_programs(build_launch(s, arch), s.sms);
}

}  // namespace tma
