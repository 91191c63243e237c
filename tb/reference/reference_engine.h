// The reference engine: what one TMA operation does, computed element by element in plain C++
// (no SystemC). It shares no address-generation code with the TLM model's AddressGenUnit: only the
// descriptor and operation types and the value conversions in tb/element_ops.h. The scoreboard
// compares the two, and the golden cases (silicon captures) prove this one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tma/descriptor/tensor_map.h"
#include "tma/descriptor/tma_op.h"

namespace tma {

enum class Outcome : uint8_t { ok, encode_error, fault };
std::string to_string(Outcome o);

struct OpResult {
  Outcome outcome = Outcome::ok;
  std::string reason;    // why the descriptor was refused or the operation faulted
  // Bytes a load reports to its mbarrier (complete_tx): the shared-memory bytes of its rows without the
  // swizzle-span row padding, halo rows of im2col::w included, and for b4x16_p64 / b6x16_p32 the whole
  // 16-byte unit (its padding bytes are counted though not written; docs/blackwell-forms.md).
  uint32_t tx_bytes = 0;
};

struct ReferenceOptions {
  // sm_100 adds im2col::w / ::w128, gather4 / scatter4, the sub-byte types, 96B swizzle and the 128B
  // swizzle atomicities (modelled from PTX ISA 5.5, docs/blackwell-forms.md); sm_90 refuses them.
  GpuArch arch = GpuArch::sm90;
  // Tiled and gather4 loads copy the rows that lie wholly inside the tensor in one piece per 16
  // bytes (per 8 for the 8-byte-flip atom), and a partial row's inside 16-byte chunks likewise; the
  // rest unit by unit. Off, every unit takes the unit path: the tests compare the two
  // (tests/test_reference_fast_paths.cpp). The results are the same either way.
  bool fast_paths = true;
};

// Runs `op` on `map`. `global` is the whole global-memory image (map.global_address is a byte
// offset into it) and is updated by stores and reductions; `smem` is the CTA's shared memory,
// updated by loads (its size is the CTA's shared-memory capacity). Never reads or writes outside the two vectors: an access outside `global`
// is reported as a fault.
OpResult reference_execute(const TensorMap& map, const TmaOp& op, std::vector<uint8_t>& global,
                           std::vector<uint8_t>& smem, const ReferenceOptions& options = {});

// Shared-memory byte address after swizzling, for an unswizzled address `addr` (exposed for tests
// of the seed's swizzle tables).
uint32_t reference_swizzle(SwizzleMode mode, SwizzleAtom atom, uint32_t addr);

}  // namespace tma
