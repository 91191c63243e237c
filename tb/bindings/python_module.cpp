// The Python module `tma` (docs/integration.md, "Python"): tensor maps from the driver's parameters,
// validated with the driver's rules, the project's 128-byte encoding and the driver's CUtensorMap,
// the reference engine on NumPy arrays, golden cases. Built when pybind11 is found (Debian's
// pybind11-dev / python3-pybind11): build/python/tma*.so, installed to <prefix>/lib/python3/dist-packages.
// Enumerations are the strings of the YAML files ("bf16", "128B", "load", "sm_90").
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "tma/descriptor/descriptor_codec.h"
#include "tma/descriptor/descriptor_validation.h"
#include "tma/descriptor/driver_descriptor.h"
#include "tma/descriptor/tensor_map.h"
#include "tma/descriptor/tma_op.h"
#include "tma/golden/golden_case.h"
#include "tma/golden/golden_check.h"
#include "tma/reference/reference_engine.h"

namespace py = pybind11;
using namespace tma;

namespace {

// Exceptions, created in the module init.
PyObject* g_error = nullptr;             // tma.Error (base)
PyObject* g_validation_error = nullptr;  // tma.ValidationError(rule, message): the driver refuses the map
PyObject* g_fault = nullptr;             // tma.Fault(reason): the operation traps

[[noreturn]] void raise(PyObject* type, const std::string& first, const std::string& second = "") {
  py::object t = py::reinterpret_borrow<py::object>(type);
  py::object e = second.empty() ? t(first) : t(first, second);
  if (!second.empty()) {
    e.attr("rule") = first;
    e.attr("message") = second;
  } else {
    e.attr("reason") = first;
  }
  PyErr_SetObject(type, e.ptr());
  throw py::error_already_set();
}

template <class T>
T parse_or_throw(const std::optional<T>& v, const std::string& what, const std::string& s, const std::string& names) {
  if (!v) throw py::value_error("unknown " + what + " '" + s + "' (one of: " + names + ")");
  return *v;
}

GpuArch arch_of(const std::string& s) { return parse_or_throw(parse_gpu_arch(s), "arch", s, "sm_90, sm_100"); }

template <class Arr>
Arr to_array(const std::vector<int64_t>& v, const char* field) {
  Arr a{};
  if (v.size() > a.size()) throw py::value_error(std::string(field) + ": at most " + std::to_string(a.size()) + " values");
  for (size_t i = 0; i < v.size(); ++i) a[i] = static_cast<typename Arr::value_type>(v[i]);
  return a;
}

template <class Arr>
std::vector<int64_t> to_list(const Arr& a, size_t n) {
  std::vector<int64_t> v;
  for (size_t i = 0; i < n && i < a.size(); ++i) v.push_back(static_cast<int64_t>(a[i]));
  return v;
}

std::string swizzle_of(const TensorMap& m) { return swizzle_name(m.swizzle, m.swizzle_atom); }

// cuTensorMapEncodeTiled / Im2col / Im2colWide's parameters (innermost dimension first; strides in
// bytes, rank - 1 of them), validated with the driver's rules: ValidationError(rule, message).
TensorMap make_map(const std::string& dtype, const std::vector<int64_t>& global_dim,
                   const std::vector<int64_t>& global_strides, const std::vector<int64_t>& box_dim,
                   std::optional<std::vector<int64_t>> element_strides, const std::string& interleave,
                   const std::string& swizzle, const std::string& l2_promotion, const std::string& oob_fill,
                   uint64_t global_address, const std::string& mode, const std::vector<int64_t>& lower_corner,
                   const std::vector<int64_t>& upper_corner, uint32_t channels_per_pixel,
                   uint32_t pixels_per_column, const std::string& arch, bool validate) {
  TensorMap m;
  m.mode = parse_or_throw(parse_tensor_mode(mode), "mode", mode, tensor_mode_names());
  m.dtype = parse_or_throw(parse_data_type(dtype), "dtype", dtype, data_type_names());
  m.rank = static_cast<int>(global_dim.size());
  m.global_address = global_address;
  m.dims = to_array<decltype(m.dims)>(global_dim, "global_dim");
  m.strides = to_array<decltype(m.strides)>(global_strides, "global_strides");
  m.box = to_array<decltype(m.box)>(box_dim, "box_dim");
  if (element_strides) {
    m.element_strides = to_array<decltype(m.element_strides)>(*element_strides, "element_strides");
  }
  m.interleave = parse_or_throw(parse_interleave(interleave), "interleave", interleave, interleave_names());
  if (!parse_swizzle_name(swizzle, m.swizzle, m.swizzle_atom))
    throw py::value_error("unknown swizzle '" + swizzle + "' (one of: " + swizzle_names() + ")");
  m.l2_promotion = parse_or_throw(parse_l2_promotion(l2_promotion), "l2_promotion", l2_promotion, l2_promotion_names());
  m.oob_fill = parse_or_throw(parse_oob_fill(oob_fill), "oob_fill", oob_fill, oob_fill_names());
  m.lower_corner = to_array<decltype(m.lower_corner)>(lower_corner, "lower_corner");
  m.upper_corner = to_array<decltype(m.upper_corner)>(upper_corner, "upper_corner");
  m.channels_per_pixel = channels_per_pixel;
  m.pixels_per_column = pixels_per_column;
  if (validate) {
    if (auto e = validate_tensor_map(m, arch_of(arch))) raise(g_validation_error, e->rule, e->message);
  }
  return m;
}

using Bytes = py::array_t<uint8_t, py::array::c_style>;

// A NumPy uint8 array, contiguous and writable: the engine works on a copy, written back after.
std::vector<uint8_t> take(const py::array& a, const char* what) {
  if (a.dtype().kind() != 'u' || a.itemsize() != 1) throw py::type_error(std::string(what) + ": a numpy uint8 array");
  if (!(a.flags() & py::array::c_style)) throw py::type_error(std::string(what) + ": a C-contiguous array");
  if (!a.writeable()) throw py::type_error(std::string(what) + ": a writable array");
  const auto* p = static_cast<const uint8_t*>(a.data());
  return std::vector<uint8_t>(p, p + a.nbytes());
}
void give_back(py::array& a, const std::vector<uint8_t>& v) { std::memcpy(a.mutable_data(), v.data(), v.size()); }

Bytes as_numpy(const std::vector<uint8_t>& v) {
  Bytes a(static_cast<py::ssize_t>(v.size()));
  std::memcpy(a.mutable_data(), v.data(), v.size());
  return a;
}

// The reference engine on the caller's arrays: the global image (map.global_address is a byte
// offset into it) and the CTA's shared memory. Returns tx_bytes; raises ValidationError when the
// driver would refuse the map and Fault when the operation traps (check=False: returns the OpResult).
py::object execute(const TensorMap& map, const TmaOp& op, py::array global, py::array smem, const std::string& arch,
                   bool check) {
  std::vector<uint8_t> g = take(global, "global"), s = take(smem, "smem");
  ReferenceOptions opt;
  opt.arch = arch_of(arch);
  OpResult r;
  {
    py::gil_scoped_release release;
    r = reference_execute(map, op, g, s, opt);
  }
  if (r.outcome == Outcome::ok || !check) {
    give_back(global, g);
    give_back(smem, s);
  }
  if (!check) return py::cast(r);
  if (r.outcome == Outcome::encode_error) {
    const auto e = validate_tensor_map(map, opt.arch);
    raise(g_validation_error, e ? e->rule : "encode", e ? e->message : r.reason);
  }
  if (r.outcome == Outcome::fault) raise(g_fault, r.reason);
  return py::int_(r.tx_bytes);
}

TmaOp make_op(const std::string& kind, const std::vector<int64_t>& coords, uint32_t smem_addr,
              const std::vector<int64_t>& im2col_offsets, uint16_t w_halo, uint16_t w_offset) {
  TmaOp op;
  ReduceOp reduce = ReduceOp::add;
  if (!parse_op_name(kind, op.kind, reduce)) throw py::value_error("unknown op '" + kind + "' (one of: " + op_names() + ")");
  op.reduce = reduce;
  op.coords = to_array<decltype(op.coords)>(coords, "coords");
  op.smem_addr = smem_addr;
  op.im2col_offsets = to_array<decltype(op.im2col_offsets)>(im2col_offsets, "im2col_offsets");
  op.w_halo = w_halo;
  op.w_offset = w_offset;
  return op;
}

}  // namespace

PYBIND11_MODULE(tma, mod) {
  mod.doc() = "tma-tlm: tensor maps, the reference engine of the GPU Tensor Memory Accelerator, golden cases";
  mod.attr("__version__") = TMA_VERSION;

  g_error = PyErr_NewException("tma.Error", PyExc_Exception, nullptr);
  g_validation_error = PyErr_NewException("tma.ValidationError", g_error, nullptr);
  g_fault = PyErr_NewException("tma.Fault", g_error, nullptr);
  mod.attr("Error") = py::handle(g_error);
  mod.attr("ValidationError") = py::handle(g_validation_error);
  mod.attr("Fault") = py::handle(g_fault);

  py::class_<TensorMap>(mod, "TensorMap", "A tensor-map descriptor (CUtensorMap's fields)")
      .def(py::init(&make_map), py::arg("dtype"), py::arg("global_dim"), py::arg("global_strides"),
           py::arg("box_dim") = std::vector<int64_t>{}, py::arg("element_strides") = py::none(),
           py::arg("interleave") = "none", py::arg("swizzle") = "none", py::arg("l2_promotion") = "none",
           py::arg("oob_fill") = "zero", py::arg("global_address") = 0, py::arg("mode") = "tiled",
           py::arg("lower_corner") = std::vector<int64_t>{}, py::arg("upper_corner") = std::vector<int64_t>{},
           py::arg("channels_per_pixel") = 0, py::arg("pixels_per_column") = 0, py::arg("arch") = "sm_90",
           py::arg("validate") = true,
           "cuTensorMapEncode*'s parameters, innermost dimension first (global_strides: rank - 1 byte "
           "strides); validated with the driver's rules unless validate=False (ValidationError)")
      .def_property_readonly("mode", [](const TensorMap& m) { return to_string(m.mode); })
      .def_property_readonly("dtype", [](const TensorMap& m) { return to_string(m.dtype); })
      .def_readonly("rank", &TensorMap::rank)
      .def_readwrite("global_address", &TensorMap::global_address)
      .def_property_readonly("global_dim", [](const TensorMap& m) { return to_list(m.dims, m.rank); })
      .def_property_readonly("global_strides",
                             [](const TensorMap& m) { return to_list(m.strides, m.rank > 0 ? m.rank - 1 : 0); })
      .def_property_readonly("box_dim", [](const TensorMap& m) { return to_list(m.box, m.rank); })
      .def_property_readonly("element_strides", [](const TensorMap& m) { return to_list(m.element_strides, m.rank); })
      .def_property_readonly("interleave", [](const TensorMap& m) { return to_string(m.interleave); })
      .def_property_readonly("swizzle", &swizzle_of)
      .def_property_readonly("l2_promotion", [](const TensorMap& m) { return to_string(m.l2_promotion); })
      .def_property_readonly("oob_fill", [](const TensorMap& m) { return to_string(m.oob_fill); })
      .def("validate",
           [](const TensorMap& m, const std::string& arch) {
             if (auto e = validate_tensor_map(m, arch_of(arch))) raise(g_validation_error, e->rule, e->message);
           },
           py::arg("arch") = "sm_90", "raises ValidationError(rule, message) when the driver would refuse it")
      .def("encode",
           [](const TensorMap& m) {
             const auto b = encode_descriptor(m);
             return py::bytes(reinterpret_cast<const char*>(b.data()), b.size());
           },
           "the project's 128-byte descriptor (docs/descriptor-encoding.md)")
      .def("encode_driver",
           [](const TensorMap& m, uint64_t global_base) {
             const auto b = encode_driver_descriptor(m, global_base);
             return py::bytes(reinterpret_cast<const char*>(b.data()), b.size());
           },
           py::arg("global_base") = 0,
           "the 128 bytes of the driver's CUtensorMap; its address is global_base + global_address")
      .def("canonical", &canonical_form, "the map as a descriptor holds it (unused fields zeroed)")
      .def("__eq__", [](const TensorMap& a, const TensorMap& b) { return a == b; })
      .def("__repr__", [](const TensorMap& m) {
        std::string dims;
        for (int i = 0; i < m.rank; ++i) dims += (i ? ", " : "") + std::to_string(m.dims[i]);
        return "tma.TensorMap(" + to_string(m.mode) + ", " + to_string(m.dtype) + ", [" + dims + "], swizzle=" +
               swizzle_of(m) + ")";
      });

  mod.def("decode",
          [](py::bytes b) {
            const std::string s = b;
            if (s.size() != kDescriptorBytes) throw py::value_error("a descriptor is 128 bytes");
            std::string error;
            auto m = decode_descriptor(reinterpret_cast<const uint8_t*>(s.data()), &error);
            if (!m) throw py::value_error("descriptor does not decode: " + error);
            return *m;
          },
          "the project's 128-byte descriptor back to a TensorMap");
  mod.def("decode_driver",
          [](py::bytes b, uint64_t global_base) {
            const std::string s = b;
            if (s.size() != kDriverDescriptorBytes) throw py::value_error("a CUtensorMap is 128 bytes");
            std::string error;
            auto m = decode_driver_descriptor(reinterpret_cast<const uint8_t*>(s.data()), global_base, &error);
            if (!m) throw py::value_error("CUtensorMap does not decode: " + error);
            return *m;
          },
          py::arg("cutensormap"), py::arg("global_base") = 0,
          "a driver CUtensorMap's 128 bytes to a TensorMap (global_address = its address - global_base)");
  mod.def("validation_rules", &validation_rule_ids, "the ids of the driver's rules");

  py::class_<TmaOp>(mod, "Op", "One TMA operation (cp.async.bulk.tensor, .reduce, .prefetch)")
      .def(py::init(&make_op), py::arg("kind") = "load", py::arg("coords") = std::vector<int64_t>{},
           py::arg("smem_addr") = 0, py::arg("im2col_offsets") = std::vector<int64_t>{}, py::arg("w_halo") = 0,
           py::arg("w_offset") = 0, "kind: load, store, prefetch, reduce_add, reduce_min, ... (tma.op_names())")
      .def_property_readonly("kind", [](const TmaOp& op) { return op_name(op); })
      .def_property_readonly("coords", [](const TmaOp& op) { return to_list(op.coords, op.coords.size()); })
      .def_readwrite("smem_addr", &TmaOp::smem_addr);
  mod.def("op_names", &op_names);

  py::class_<OpResult>(mod, "Result")
      .def_property_readonly("outcome", [](const OpResult& r) { return to_string(r.outcome); })
      .def_readonly("reason", &OpResult::reason)
      .def_readonly("tx_bytes", &OpResult::tx_bytes);

  mod.def("execute", &execute, py::arg("map"), py::arg("op"), py::arg("global_image"), py::arg("smem"),
          py::arg("arch") = "sm_90", py::arg("check") = true,
          "the reference engine on NumPy uint8 arrays (global image: map.global_address is an offset into it; "
          "the CTA's shared memory), updated in place. Returns tx_bytes; raises ValidationError or Fault "
          "(check=False: returns a Result and updates the arrays whatever the outcome)");
  auto op_fn = [](const char* kind) {
    return [kind](const TensorMap& map, const std::vector<int64_t>& coords, py::array global, py::array smem,
                  uint32_t smem_addr, const std::string& arch) {
      return execute(map, make_op(kind, coords, smem_addr, {}, 0, 0), global, smem, arch, true);
    };
  };
  for (const char* kind : {"load", "store", "prefetch"}) {
    mod.def(kind, op_fn(kind), py::arg("map"), py::arg("coords"), py::arg("global_image"), py::arg("smem"),
            py::arg("smem_addr") = 0, py::arg("arch") = "sm_90");
  }
  mod.def("reduce",
          [](const TensorMap& map, const std::string& op, const std::vector<int64_t>& coords, py::array global,
             py::array smem, uint32_t smem_addr, const std::string& arch) {
            return execute(map, make_op("reduce_" + op, coords, smem_addr, {}, 0, 0), global, smem, arch, true);
          },
          py::arg("map"), py::arg("op"), py::arg("coords"), py::arg("global_image"), py::arg("smem"),
          py::arg("smem_addr") = 0, py::arg("arch") = "sm_90", "op: add, min, max, inc, dec, and, or, xor");
  mod.def("word_hash_image", [](uint64_t size, uint32_t seed) { return as_numpy(word_hash_image(size, seed)); },
          py::arg("size"), py::arg("seed") = 0, "the golden cases' global image (and smem fill)");

  py::class_<GoldenCase>(mod, "GoldenCase", "A silicon golden case (tests/golden/, docs/golden-format.md)")
      .def(py::init(&load_golden_case), py::arg("path"))
      .def_readonly("path", &GoldenCase::path)
      .def_readonly("name", &GoldenCase::name)
      .def_readonly("origin", &GoldenCase::origin)
      .def_property_readonly("arch", [](const GoldenCase& c) { return to_string(c.arch); })
      .def_readonly("map", &GoldenCase::map)
      .def_readonly("op", &GoldenCase::op)
      .def_property_readonly("outcome", [](const GoldenCase& c) { return to_string(c.outcome); })
      .def_readonly("tx_bytes", &GoldenCase::tx_bytes)
      .def_readonly("smem_bytes", &GoldenCase::smem_bytes)
      .def_property_readonly("smem_image", [](const GoldenCase& c) { return as_numpy(c.smem_image); })
      .def_property_readonly("global_window",
                             [](const GoldenCase& c) -> py::object {
                               if (!c.has_global_window) return py::none();
                               return py::make_tuple(c.global_window_offset, as_numpy(c.global_window));
                             },
                             "(offset, bytes) of the global image after a store or reduction, or None")
      .def_property_readonly("driver_descriptor",
                             [](const GoldenCase& c) {
                               return py::bytes(reinterpret_cast<const char*>(c.driver_descriptor.data()),
                                                c.driver_descriptor.size());
                             })
      .def("initial_global", [](const GoldenCase& c) { return as_numpy(word_hash_image(c.global_size)); },
           "the global image the case starts from")
      .def("initial_smem", [](const GoldenCase& c) { return as_numpy(initial_smem(c, 228 * 1024)); },
           "the shared memory the case starts from (228 KB, 0xCD or the case's fill)")
      .def("check",
           [](const GoldenCase& c) {
             const CaseVerdict v = check_case(c, run_reference);
             return py::make_tuple(v.passed, v.message);
           },
           "(passed, message): the case through the reference engine, as tma-sim check does")
      .def("__repr__", [](const GoldenCase& c) { return "tma.GoldenCase(" + c.path + ")"; });
  mod.def("find_golden_cases", &find_golden_cases, py::arg("paths"), "the case files under the given folders");
}
