#include "tma/tma/swizzle_crossbar.h"

#include <algorithm>
#include <cstring>

#include "tma/descriptor/element_ops.h"

namespace tma {

namespace {

// PTX ISA 5.5.7: each row is one 128-byte line of the repeating pattern, listing the logical
// 16-byte cell stored in each physical slot.
constexpr uint8_t kPattern32[2][8] = {{0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6}};
constexpr uint8_t kPattern64[4][8] = {
    {0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6}, {2, 3, 0, 1, 6, 7, 4, 5}, {3, 2, 1, 0, 7, 6, 5, 4}};
constexpr uint8_t kPattern128[8][8] = {
    {0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6}, {2, 3, 0, 1, 6, 7, 4, 5}, {3, 2, 1, 0, 7, 6, 5, 4},
    {4, 5, 6, 7, 0, 1, 2, 3}, {5, 4, 7, 6, 1, 0, 3, 2}, {6, 7, 4, 5, 2, 3, 0, 1}, {7, 6, 5, 4, 3, 2, 1, 0}};
// 128B with 32-byte atoms: pairs of cells move together.
constexpr uint8_t kPattern128Atom32[4][8] = {
    {0, 1, 2, 3, 4, 5, 6, 7}, {2, 3, 0, 1, 6, 7, 4, 5}, {4, 5, 6, 7, 0, 1, 2, 3}, {6, 7, 4, 5, 2, 3, 0, 1}};
// 128B with 64-byte atoms: the two halves of the line swap on odd lines.
constexpr uint8_t kPattern128Atom64[2][8] = {{0, 1, 2, 3, 4, 5, 6, 7}, {4, 5, 6, 7, 0, 1, 2, 3}};

// Physical slot of each logical cell: the inverse of a table's rows, built once.
template <size_t Rows>
struct SlotTable {
  uint8_t slot[Rows][8];
  explicit SlotTable(const uint8_t (&table)[Rows][8]) {
    for (size_t r = 0; r < Rows; ++r)
      for (uint8_t p = 0; p < 8; ++p) slot[r][table[r][p]] = p;
  }
  uint32_t operator()(uint32_t line, uint32_t cell) const { return slot[line % Rows][cell]; }
};

const SlotTable<2> kSlot32(kPattern32);
const SlotTable<4> kSlot64(kPattern64);
const SlotTable<8> kSlot128(kPattern128);
const SlotTable<4> kSlot128Atom32(kPattern128Atom32);
const SlotTable<2> kSlot128Atom64(kPattern128Atom64);

}  // namespace

uint32_t crossbar_swizzle(SwizzleMode mode, SwizzleAtom atom, uint32_t logical) {
  const uint32_t line = logical / 128, cell = (logical % 128) / 16, byte = logical % 16;
  uint32_t slot = cell, in_cell = byte;
  switch (mode) {
    case SwizzleMode::none: return logical;
    case SwizzleMode::b32:
    case SwizzleMode::b96: slot = kSlot32(line, cell); break;
    case SwizzleMode::b64: slot = kSlot64(line, cell); break;
    case SwizzleMode::b128:
      switch (atom) {
        case SwizzleAtom::b16: slot = kSlot128(line, cell); break;
        case SwizzleAtom::b32: slot = kSlot128Atom32(line, cell); break;
        case SwizzleAtom::b32_flip_8b:
          slot = kSlot128Atom32(line, cell);
          if (line % 2) in_cell ^= 8;  // the 8-byte halves swap on every other line
          break;
        case SwizzleAtom::b64: slot = kSlot128Atom64(line, cell); break;
      }
      break;
  }
  return line * 128 + slot * 16 + in_cell;
}

SwizzleCrossbar::SwizzleCrossbar(sc_core::sc_module_name name, const ArchConfig& arch, int cta_in_cluster)
    : sc_module(name), data_in("data_in"), gather_in("gather_in"), smem_write_out("smem_write_out"),
      smem_read_out("smem_read_out"), dsmem_out("dsmem_out"), clock_(arch.sm_clock_mhz), cta_(cta_in_cluster) {
  data_in.register_b_transport(this, &SwizzleCrossbar::deliver);
  gather_in.register_b_transport(this, &SwizzleCrossbar::gather);
}

void SwizzleCrossbar::map_pieces(const SmemDelivery& d, std::vector<SmemChunk>& chunks, uint32_t data_shift) const {
  chunks.clear();
  const bool flips = d.swizzle == SwizzleMode::b128 && d.atom == SwizzleAtom::b32_flip_8b;
  const uint32_t granule = flips ? 8 : 16;  // a chunk never straddles a unit that moves alone
  // The table of the mode, chosen once (crossbar_swizzle's choice, per call rather than per chunk).
  const uint8_t(*slots)[8] = nullptr;
  uint32_t rows = 1;
  switch (d.swizzle) {
    case SwizzleMode::none: break;
    case SwizzleMode::b32:
    case SwizzleMode::b96: slots = kSlot32.slot; rows = 2; break;
    case SwizzleMode::b64: slots = kSlot64.slot; rows = 4; break;
    case SwizzleMode::b128:
      switch (d.atom) {
        case SwizzleAtom::b16: slots = kSlot128.slot; rows = 8; break;
        case SwizzleAtom::b32:
        case SwizzleAtom::b32_flip_8b: slots = kSlot128Atom32.slot; rows = 4; break;
        case SwizzleAtom::b64: slots = kSlot128Atom64.slot; rows = 2; break;
      }
      break;
  }
  uint32_t offset = 0;
  for (const SmemPiece& p : d.pieces) {
    uint32_t done = 0;
    const uint32_t data = (p.fill ? offset : p.data_offset + data_shift);
    while (done < p.bytes) {
      const uint32_t logical = d.smem_base + p.box_offset + done;
      // granule and rows are powers of two: masks, not the divisions a variable modulo compiles to.
      const uint32_t n = std::min(p.bytes - done, granule - (logical & (granule - 1)));
      uint32_t physical = logical;
      if (slots) {
        const uint32_t line = logical / 128;
        uint32_t in_cell = logical % 16;
        if (flips && line % 2) in_cell ^= 8;  // the 8-byte halves swap on every other line
        physical = line * 128 + slots[line & (rows - 1)][(logical % 128) / 16] * 16u + in_cell;
      }
      // Field by field: a whole temporary made a 4+4-byte store read back as 8 (a stalled forward).
      SmemChunk& c = chunks.emplace_back();
      c.address = physical;
      c.bytes = n;
      c.data_offset = data + done;
      done += n;
    }
    if (p.fill) offset += p.bytes;
  }
}

// Loads: data pieces point into the payload's data; fill pieces are generated here. The
// payload's buffer is rebuilt as [fill bytes..., converted data...] for the smem write.
void SwizzleCrossbar::deliver(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  SmemDelivery* d = gp.get_extension<SmemDelivery>();
  if (!d) {
    gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  const uint32_t e = element_bytes(d->dtype);
  uint32_t fill_total = 0;
  for (const SmemPiece& p : d->pieces) fill_total += p.fill ? p.bytes : 0;
  buffer_.resize(fill_total + gp.get_data_length());
  uint8_t* fill = buffer_.data();
  uint8_t* data = buffer_.data() + fill_total;
  if (is_sub_byte(d->dtype))
    std::memset(fill, 0, fill_total);  // their fill is zero (NaN fill is refused for them)
  else
    for (uint32_t i = 0; i < fill_total; i += e) oob_fill_element(d->dtype, d->oob_fill, fill + i);
  fill_bytes_ += fill_total;
  // Value conversion of the data (tf32 rounds; the other types pass unchanged).
  if (d->dtype == DataType::tf32 || d->dtype == DataType::tf32_ftz) {
    for (uint32_t i = 0; i + 4 <= gp.get_data_length(); i += 4) load_convert(d->dtype, gp.get_data_ptr() + i, data + i);
    converted_elements_ += gp.get_data_length() / 4;
  } else if (gp.get_data_length()) {
    std::memcpy(data, gp.get_data_ptr(), gp.get_data_length());
  }
  // Chunks: fill pieces index the fill area, data pieces the data area (shifted past the fill).
  map_pieces(*d, access_.chunks, fill_total);
  for (const SmemPiece& p : d->pieces)
    if (!p.fill) data_bytes_ += p.bytes;

  access_.op_id = d->op_id;
  out_gp_.set_command(tlm::TLM_WRITE_COMMAND);
  out_gp_.set_data_ptr(buffer_.data());
  out_gp_.set_data_length(static_cast<unsigned>(buffer_.size()));
  ScopedExtension<SmemAccess> ext(out_gp_, &access_);
  sc_core::sc_time done = delay;
  const uint16_t mask = d->cta_mask ? d->cta_mask : static_cast<uint16_t>(1u << cta_);
  for (int cta = 0; cta < 16; ++cta) {
    if (!(mask & (1u << cta))) continue;
    sc_core::sc_time dl = delay;
    access_.cta = cta;
    if (cta == cta_) {
      smem_write_out->b_transport(out_gp_, dl);
    } else {
      ++multicast_copies_;
      dsmem_out->b_transport(out_gp_, dl);
    }
    done = std::max(done, dl);
  }
  delay = done;
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

// Stores: read the pieces' bytes from their swizzled addresses into the payload's data, in
// piece order.
void SwizzleCrossbar::gather(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  SmemDelivery* d = gp.get_extension<SmemDelivery>();
  if (!d) {
    gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  map_pieces(*d, access_.chunks);
  access_.op_id = d->op_id;
  access_.cta = cta_;
  out_gp_.set_command(tlm::TLM_READ_COMMAND);
  out_gp_.set_data_ptr(gp.get_data_ptr());
  out_gp_.set_data_length(gp.get_data_length());
  ScopedExtension<SmemAccess> ext(out_gp_, &access_);
  smem_read_out->b_transport(out_gp_, delay);
  gathered_bytes_ += gp.get_data_length();
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void SwizzleCrossbar::collect_stats(StatsRecord& out) const {
  out.add("data_bytes", data_bytes_);
  out.add("fill_bytes", fill_bytes_);
  out.add("gathered_bytes", gathered_bytes_);
  out.add("multicast_copies", multicast_copies_);
  out.add("converted_elements", converted_elements_);
}

}  // namespace tma
