#include "tma/descriptor/tma_op.h"

namespace tma {

namespace {
constexpr const char* kReduceNames[] = {"add", "min", "max", "inc", "dec", "and", "or", "xor"};
}

std::string to_string(ReduceOp r) { return kReduceNames[static_cast<int>(r)]; }

std::string op_name(const TmaOp& op) {
  switch (op.kind) {
    case OpKind::load: return "load";
    case OpKind::store: return "store";
    case OpKind::prefetch: return "prefetch";
    case OpKind::reduce: return "reduce_" + to_string(op.reduce);
  }
  return "?";
}

bool parse_op_name(const std::string& s, OpKind& kind, ReduceOp& reduce) {
  if (s == "load") { kind = OpKind::load; return true; }
  if (s == "store") { kind = OpKind::store; return true; }
  if (s == "prefetch") { kind = OpKind::prefetch; return true; }
  for (int i = 0; i < 8; ++i) {
    if (s == std::string("reduce_") + kReduceNames[i]) {
      kind = OpKind::reduce;
      reduce = static_cast<ReduceOp>(i);
      return true;
    }
  }
  return false;
}

std::string op_names() {
  std::string out = "load, store, prefetch";
  for (const char* r : kReduceNames) out += std::string(", reduce_") + r;
  return out;
}

}  // namespace tma
