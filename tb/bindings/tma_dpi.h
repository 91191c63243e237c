/* The C ABI over the reference engine (docs/integration.md, "SystemVerilog"): tensor maps built
 * field by field, validated with the driver's rules, encoded to the project's 128 bytes or the
 * driver's CUtensorMap; one operation run on the caller's buffers; the reason of a refusal or fault.
 * Every type is one SystemVerilog's DPI-C maps directly (int, longint, string, chandle, byte), so
 * tb/bindings/tma_dpi_pkg.sv imports each function as it is; C and C++ callers use it too.
 * Library: libtma_dpi.so (links the reference engine and the descriptor, no SystemC).
 *
 * Names are the YAML files' strings: dtype "bf16", swizzle "128B", op "load" / "reduce_add",
 * arch "sm_90". Functions returning int return 0 on success, else -1 (bad argument: unknown name,
 * index out of range; tma_last_error says which). Not thread-safe across threads sharing a handle;
 * the last error is per thread. */
#ifndef TMA_BINDINGS_TMA_DPI_H
#define TMA_BINDINGS_TMA_DPI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Outcomes of tma_execute (and tma_validate: TMA_OK or TMA_ENCODE_ERROR). */
#define TMA_OK 0
#define TMA_ENCODE_ERROR 1 /* the driver refuses the map: tma_last_rule(), tma_last_error() */
#define TMA_FAULT 2        /* the operation traps: tma_last_error() is the reason */

const char* tma_version(void);
const char* tma_last_error(void); /* the message of the last refusal, fault or bad argument ("" if none) */
const char* tma_last_rule(void);  /* the driver rule of the last refusal, e.g. "globalStrides.multiple_of_16" */

/* ---- tensor maps ---- */
void* tma_map_new(const char* mode, const char* dtype, int rank, int64_t global_address); /* NULL: bad name */
void tma_map_free(void* map);
int tma_map_set_dim(void* map, int i, int64_t elements);      /* globalDim[i], innermost first */
int tma_map_set_stride(void* map, int i, int64_t bytes);      /* globalStrides[i] (steps dimension i+1) */
int tma_map_set_box(void* map, int i, int elements);          /* boxDim[i] */
int tma_map_set_element_stride(void* map, int i, int stride); /* elementStrides[i] */
int tma_map_set_corner(void* map, int i, int lower, int upper); /* im2col pixel box corners */
int tma_map_set_im2col(void* map, int channels_per_pixel, int pixels_per_column);
/* field: "swizzle", "interleave", "l2_promotion", "oob_fill" */
int tma_map_set(void* map, const char* field, const char* value);
int tma_validate(const void* map, const char* arch); /* TMA_OK, TMA_ENCODE_ERROR, -1 */
/* 128 bytes into out: the project's encoding / the driver's CUtensorMap (its address: global_base + global_address) */
int tma_map_encode(const void* map, uint8_t* out);
int tma_map_encode_driver(const void* map, int64_t global_base, uint8_t* out);
void* tma_map_decode(const uint8_t* bytes);                         /* NULL: does not decode */
void* tma_map_decode_driver(const uint8_t* bytes, int64_t global_base); /* NULL: does not decode */
int tma_map_equal(const void* a, const void* b);                    /* 1 when the same map */

/* ---- operations ---- */
void* tma_op_new(const char* kind, int smem_addr); /* "load", "store", "prefetch", "reduce_add", ... */
void tma_op_free(void* op);
int tma_op_set_coord(void* op, int i, int coord);
int tma_op_set_im2col(void* op, int i, int offset); /* im2col offsets, innermost first */
int tma_op_set_wide(void* op, int w_halo, int w_offset);

/* Runs op on caller's buffers: global (map's global_address is a byte offset into it) and the CTA's
 * shared memory. Returns TMA_OK, TMA_ENCODE_ERROR or TMA_FAULT (-1: bad argument); *tx_bytes (may be
 * NULL) gets what complete_tx counts. Buffers are written only when the outcome is TMA_OK. */
int tma_execute(const void* map, const void* op, uint8_t* global, int64_t global_size, uint8_t* smem,
                int64_t smem_size, const char* arch, uint32_t* tx_bytes);

/* ---- buffers kept on the C side, for callers (SystemVerilog) that pass no pointers ---- */
void* tma_buf_new(int64_t size, int fill);                /* every byte = fill */
void tma_buf_free(void* buf);
int64_t tma_buf_size(const void* buf);
int tma_buf_get(const void* buf, int64_t offset);          /* 0..255, -1 out of range */
int tma_buf_set(void* buf, int64_t offset, int value);
int tma_buf_word_hash(void* buf, int64_t offset, int64_t size, int seed); /* the golden cases' fill */
/* The 128 bytes of tma_map_encode / tma_map_encode_driver into buf at offset, and back. */
int tma_map_encode_buf(const void* map, void* buf, int64_t offset);
int tma_map_encode_driver_buf(const void* map, int64_t global_base, void* buf, int64_t offset);
void* tma_map_decode_buf(const void* buf, int64_t offset);
void* tma_map_decode_driver_buf(const void* buf, int64_t offset, int64_t global_base);
/* tma_execute on buffers of tma_buf_new; *tx_bytes as in tma_execute. */
int tma_execute_buf(const void* map, const void* op, void* global, void* smem, const char* arch, int* tx_bytes);

/* ---- silicon golden cases (tests/golden/, docs/golden-format.md): what the design is compared with ---- */
void* tma_golden_load(const char* path); /* NULL: does not load (tma_last_error) */
void tma_golden_free(void* golden);
const char* tma_golden_name(const void* golden);
const char* tma_golden_arch(const void* golden);   /* "sm_90", "sm_100" */
void* tma_golden_map(const void* golden);          /* a new map (tma_map_free) */
void* tma_golden_op(const void* golden);           /* a new op (tma_op_free) */
int tma_golden_outcome(const void* golden);        /* TMA_OK, TMA_ENCODE_ERROR, TMA_FAULT: what silicon did */
int tma_golden_tx_bytes(const void* golden);       /* -1 when not recorded */
void* tma_golden_global(const void* golden);       /* a new buffer: the global image the case starts from */
void* tma_golden_smem(const void* golden);         /* a new buffer: its shared memory (228 KB) */
/* The bytes silicon left: a new buffer, and where they are: *in_global = 1 for global memory at
 * *offset (stores, reductions), 0 for shared memory from 0 (loads, prefetch). NULL for a refusal or fault. */
void* tma_golden_expected(const void* golden, int* in_global, int64_t* offset);

#ifdef __cplusplus
}
#endif

#endif
