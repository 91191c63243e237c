// SystemVerilog imports of the tma-tlm reference engine (tb/bindings/tma_dpi.h, libtma_dpi.so):
// build a tensor map, validate it with the driver's rules, encode it, run one TMA operation on
// buffers held on the C side, read the reason of a refusal or fault. docs/integration.md,
// "SystemVerilog", shows a scoreboard that predicts with it; tests/dpi/ runs one under Verilator.
// Names are the YAML files' strings ("bf16", "128B", "load", "reduce_add", "sm_90").
package tma_dpi_pkg;
  localparam int TMA_OK = 0;
  localparam int TMA_ENCODE_ERROR = 1;  // the driver refuses the map: tma_last_rule(), tma_last_error()
  localparam int TMA_FAULT = 2;         // the operation traps: tma_last_error()

  import "DPI-C" function string tma_version();
  import "DPI-C" function string tma_last_error();
  import "DPI-C" function string tma_last_rule();

  // Tensor maps (innermost dimension first).
  import "DPI-C" function chandle tma_map_new(string mode, string dtype, int rank, longint global_address);
  import "DPI-C" function void tma_map_free(chandle tensor_map);
  import "DPI-C" function int tma_map_set_dim(chandle tensor_map, int i, longint elements);
  import "DPI-C" function int tma_map_set_stride(chandle tensor_map, int i, longint bytes);
  import "DPI-C" function int tma_map_set_box(chandle tensor_map, int i, int elements);
  import "DPI-C" function int tma_map_set_element_stride(chandle tensor_map, int i, int stride);
  import "DPI-C" function int tma_map_set_corner(chandle tensor_map, int i, int lower, int upper);
  import "DPI-C" function int tma_map_set_im2col(chandle tensor_map, int channels_per_pixel, int pixels_per_column);
  import "DPI-C" function int tma_map_set(chandle tensor_map, string field, string value);
  import "DPI-C" function int tma_validate(chandle tensor_map, string arch);
  import "DPI-C" function int tma_map_equal(chandle a, chandle b);
  import "DPI-C" function int tma_map_encode_buf(chandle tensor_map, chandle mem, longint offset);
  import "DPI-C" function int tma_map_encode_driver_buf(chandle tensor_map, longint global_base, chandle mem, longint offset);
  import "DPI-C" function chandle tma_map_decode_buf(chandle mem, longint offset);
  import "DPI-C" function chandle tma_map_decode_driver_buf(chandle mem, longint offset, longint global_base);

  // Operations.
  import "DPI-C" function chandle tma_op_new(string kind, int smem_addr);
  import "DPI-C" function void tma_op_free(chandle op);
  import "DPI-C" function int tma_op_set_coord(chandle op, int i, int coord);
  import "DPI-C" function int tma_op_set_im2col(chandle op, int i, int offset);
  import "DPI-C" function int tma_op_set_wide(chandle op, int w_halo, int w_offset);

  // Buffers (global image, shared memory) held on the C side.
  import "DPI-C" function chandle tma_buf_new(longint size, int fill);
  import "DPI-C" function void tma_buf_free(chandle mem);
  import "DPI-C" function longint tma_buf_size(chandle mem);
  import "DPI-C" function int tma_buf_get(chandle mem, longint offset);
  import "DPI-C" function int tma_buf_set(chandle mem, longint offset, int value);
  import "DPI-C" function int tma_buf_word_hash(chandle mem, longint offset, longint size, int seed);

  // The reference engine: TMA_OK, TMA_ENCODE_ERROR or TMA_FAULT; the buffers change only on TMA_OK.
  import "DPI-C" function int tma_execute_buf(chandle tensor_map, chandle op, chandle global_image, chandle smem,
                                              string arch, output int tx_bytes);

  // Silicon golden cases (tests/golden/, <prefix>/share/tma/tests/golden/): what the design is compared with.
  import "DPI-C" function chandle tma_golden_load(string path);
  import "DPI-C" function void tma_golden_free(chandle golden);
  import "DPI-C" function string tma_golden_name(chandle golden);
  import "DPI-C" function string tma_golden_arch(chandle golden);
  import "DPI-C" function chandle tma_golden_map(chandle golden);
  import "DPI-C" function chandle tma_golden_op(chandle golden);
  import "DPI-C" function int tma_golden_outcome(chandle golden);
  import "DPI-C" function int tma_golden_tx_bytes(chandle golden);
  import "DPI-C" function chandle tma_golden_global(chandle golden);
  import "DPI-C" function chandle tma_golden_smem(chandle golden);
  import "DPI-C" function chandle tma_golden_expected(chandle golden, output int in_global, output longint offset);
endpackage
