// Value conversions of single elements, shared by the TLM model and the reference engine:
// the load conversion (tf32 rounding), the out-of-bound fill value, and the reduction arithmetic
// of cp.reduce.async.bulk.tensor. No addressing here.
#pragma once

#include <cstdint>

#include "tma/descriptor/tensor_map.h"
#include "tma/descriptor/tma_op.h"

namespace tma {

// Writes the element as a load delivers it to shared memory (bytes are little-endian, element_bytes(t) long).
void load_convert(DataType t, const uint8_t* global_element, uint8_t* smem_element);

// Writes the out-of-bound fill of one element: zeros, or for float types with NaN fill the
// 16-bit pattern 0x7FF7 in every 16-bit half (what sm_90 writes).
void oob_fill_element(DataType t, OobFill fill, uint8_t* smem_element);

// Whether sm_90 performs this reduction on this element type (PTX ISA cp.reduce.async.bulk.tensor
// type table, as silicon showed it); an unsupported pair traps.
bool reduce_supported(DataType t, ReduceOp op);

// global = global (op) source, in place. Only for supported pairs.
void reduce_element(DataType t, ReduceOp op, const uint8_t* smem_element, uint8_t* global_element);

// .b6p2x16 (a store through a b6x16_p32 map): sixteen shared-memory bytes, 6 data bits at the LSB and
// 2 padding bits at the MSB, packed to 12 global bytes, element i at bits [6i, 6i+6) little-endian.
void pack_b6p2x16(const uint8_t* smem16, uint8_t* global12);

// IEEE helpers used by the reductions (round to nearest even), exposed for tests.
uint16_t float_to_half_rne(float f);
uint16_t float_to_bf16_rne(float f);
float half_to_float(uint16_t h);
float bf16_to_float(uint16_t b);
uint32_t tf32_round(uint32_t f32_bits);

}  // namespace tma
