"""ctest python_module: the Python module tma (tb/bindings/python_module.cpp).
Usage: PYTHONPATH=build/python python3 test_module.py SOURCE_DIR"""
import os
import sys

import numpy as np

import tma

sys.path.insert(0, os.path.dirname(__file__))
from doc_blocks import block  # noqa: E402

src = sys.argv[1]
results = {"passed": 0, "failed": 0}


def case(fn):
    try:
        fn()
        results["passed"] += 1
        print(f"ok: {fn.__name__}")
    except Exception as e:  # noqa: BLE001
        results["failed"] += 1
        print(f"FAILED: {fn.__name__}: {type(e).__name__}: {e}")
    return fn


def raises(exc, fn):
    try:
        fn()
    except exc as e:
        return e
    raise AssertionError(f"no {exc.__name__}")


@case
def version():
    cmake = open(os.path.join(src, "CMakeLists.txt")).read()
    assert f"VERSION {tma.__version__} " in cmake, tma.__version__


@case
def validation_names_rule_and_value():
    e = raises(tma.ValidationError, lambda: tma.TensorMap("bf16", [56, 16], [120], [64, 8]))
    assert e.rule == "globalStrides.multiple_of_16", e.rule
    assert "120" in e.message, e.message
    assert isinstance(e, tma.Error)
    assert e.rule in tma.validation_rules()
    # validate=False builds it; validate() refuses it then.
    m = tma.TensorMap("bf16", [56, 16], [120], [64, 8], validate=False)
    assert raises(tma.ValidationError, m.validate).rule == "globalStrides.multiple_of_16"
    e = raises(tma.ValidationError, lambda: tma.TensorMap("u8", [64], [], [512]))
    assert e.rule.startswith("boxDim"), e.rule
    assert raises(ValueError, lambda: tma.TensorMap("bf17", [8], [], [8])).args[0].startswith("unknown dtype")


@case
def encode_decode():
    m = tma.TensorMap("f16", [100, 20, 3], [256, 5120], [32, 8, 2], swizzle="64B", oob_fill="nan",
                      l2_promotion="128B", global_address=0x1000)
    b = m.encode()
    assert len(b) == 128
    assert tma.decode(b) == m.canonical()
    d = m.encode_driver(global_base=0x7F0000000000)
    assert len(d) == 128
    assert int.from_bytes(d[:8], "little") == 0x7F0000001000
    assert tma.decode_driver(d, 0x7F0000000000) == m.canonical()
    assert (m.dtype, m.swizzle, m.global_dim, m.global_strides, m.box_dim) == \
        ("f16", "64B", [100, 20, 3], [256, 5120], [32, 8, 2])
    assert raises(ValueError, lambda: tma.decode(bytes(128))).args[0].startswith("descriptor does not decode")


@case
def driver_bytes_of_silicon():
    # Real CUtensorMap bytes captured on silicon decode to the case's map.
    n = 0
    for path in tma.find_golden_cases([os.path.join(src, "tests/golden/silicon")])[:60]:
        c = tma.GoldenCase(path)
        d = c.driver_descriptor
        if len(d) != 128:
            continue
        address = int.from_bytes(d[:8], "little")
        assert tma.decode_driver(d, address - c.map.global_address) == c.map.canonical(), c.name
        n += 1
    assert n > 10, n


@case
def operations_on_numpy():
    m = tma.TensorMap("u32", [16, 4], [64], [16, 4], swizzle="64B")
    g = np.arange(64, dtype=np.uint32).view(np.uint8)
    s = np.full(228 * 1024, 0xCD, dtype=np.uint8)
    assert tma.load(m, [0, 0], g, s) == 256
    assert sorted(s[:256].view(np.uint32).tolist()) == list(range(64)) and s[256] == 0xCD
    s[:256].view(np.uint32)[:] = 1000       # every element of the box (the swizzle moves none out of it)
    assert tma.reduce(m, "add", [0, 0], g, s) == 0
    assert g.view(np.uint32)[5] == 1005
    assert tma.reduce(m, "min", [0, 0], g, s) == 0
    assert g.view(np.uint32)[5] == 1000
    s[:256] = 7
    tma.store(m, [0, 0], g, s)
    assert (g == 7).all()
    assert tma.prefetch(m, [0, 0], g, s) == 0
    r = tma.execute(m, tma.Op("reduce_max", [0, 0], 0), g, s, check=False)
    assert (r.outcome, r.tx_bytes) == ("ok", 0)
    e = raises(tma.Fault, lambda: tma.reduce(tma.TensorMap("u8", [64], [], [64]), "add", [0], g, s))
    assert "not supported on u8" in e.reason, e.reason


@case
def faults_are_exceptions():
    m = tma.TensorMap("u8", [64, 4], [64], [64, 4], swizzle="64B")
    g = np.zeros(256, dtype=np.uint8)
    s = np.full(228 * 1024, 0xCD, dtype=np.uint8)
    e = raises(tma.Fault, lambda: tma.load(m, [0, 0], g, s, smem_addr=0x3040))
    assert e.reason and isinstance(e, tma.Error), e.reason
    assert (s == 0xCD).all()
    # A global image too small for the tensor: a fault, never an access outside the array.
    assert raises(tma.Fault, lambda: tma.load(m, [0, 0], np.zeros(100, dtype=np.uint8), s)).reason
    r = tma.execute(m, tma.Op("load", [0, 0], 0x3040), g, s, check=False)
    assert r.outcome == "fault" and r.reason == e.reason
    assert raises(TypeError, lambda: tma.load(m, [0, 0], g.astype(np.int32), s))


@case
def golden_cases():
    paths = tma.find_golden_cases([os.path.join(src, "tests/golden/silicon")])
    assert len(paths) == 726, len(paths)
    outcomes = {}
    for p in paths[:80]:
        c = tma.GoldenCase(p)
        passed, message = c.check()
        assert passed, message
        outcomes[c.outcome] = outcomes.get(c.outcome, 0) + 1
    assert set(outcomes) >= {"ok"}, outcomes


@case
def documented_example():
    exec(compile(block(os.path.join(src, "docs/integration.md"), "python-example"), "python-example", "exec"), {})


print(f"{results['passed']} passed, {results['failed']} failed")
sys.exit(1 if results["failed"] else 0)
