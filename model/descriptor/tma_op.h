// One TMA operation as the PTX instruction states it: what to do, where in the tensor,
// and where in shared memory. Shared by the TLM model and the reference engine.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace tma {

enum class OpKind : uint8_t { load, store, reduce, prefetch };
// cp.reduce.async.bulk.tensor .redOp
enum class ReduceOp : uint8_t { add, min, max, inc, dec, and_, or_, xor_ };

struct TmaOp {
  OpKind kind = OpKind::load;
  ReduceOp reduce = ReduceOp::add;  // reduce only
  // Tensor coordinates, innermost first. im2col: (C, W, [H, [D,]] N).
  // gather4/scatter4: coords[0] is the column (dim 0), coords[1..4] the four rows (dim 1).
  std::array<int32_t, 5> coords{};
  std::array<uint16_t, 3> im2col_offsets{};  // im2col only, innermost first (W, H, D)
  uint16_t w_halo = 0;                       // im2col_w / im2col_w128 only
  uint16_t w_offset = 0;                     // im2col_w / im2col_w128 only
  uint32_t smem_addr = 0;                    // shared-memory byte address (destination or source)
};

// YAML names: load, store, prefetch, reduce_add, reduce_min, ... reduce_xor.
std::string op_name(const TmaOp& op);
bool parse_op_name(const std::string& s, OpKind& kind, ReduceOp& reduce);
std::string op_names();
std::string to_string(ReduceOp r);

}  // namespace tma
