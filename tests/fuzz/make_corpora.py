#!/usr/bin/env python3
"""Seed corpora and dictionaries for the fuzz harnesses, made at fuzz time from what the
repository holds (nothing here is committed beyond tests/fuzz/seeds/, a few hand-made inputs):

  golden_case        tests/golden/silicon/*.yaml, their image and descriptor files renamed to
                     a.bin / b.bin with a "#@files A B" trailer (fuzz_support.h)
  scenario           configs/**/*.yaml
  arch_config        configs/**/*.yaml
  driver_descriptor  tests/golden/silicon/*.desc
  validation, descriptor_codec, reference_engine
                     the maps and operations of the golden cases (the seed maker, make_seeds.cpp)
  trace              only the hand-made seeds (tests/fuzz/seeds/trace/: exported traces)

and one dictionary per YAML harness (every key and scalar word the seeds use).

  make_corpora.py OUT_DIR SEED_MAKER     (writes OUT_DIR/seeds/NAME/ and OUT_DIR/dict/NAME.dict)
"""
import glob
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(ROOT, "tests", "golden", "silicon")
FILE_KEYS = re.compile(r"^(\s*)(smem_image|image|driver_descriptor):\s*(\S+)\s*$")


def golden_seed(path):
    """The case with its binary files named a.bin (image) and b.bin (descriptor)."""
    sizes = {"a.bin": 0, "b.bin": 0}
    out = []
    with open(path) as f:
        for line in f:
            m = FILE_KEYS.match(line.rstrip("\n"))
            if m:
                target = "b.bin" if m.group(2) == "driver_descriptor" else "a.bin"
                src = os.path.join(os.path.dirname(path), m.group(3))
                sizes[target] = os.path.getsize(src) if os.path.exists(src) else 0
                line = "%s%s: %s\n" % (m.group(1), m.group(2), target)
            out.append(line)
    out.append("#@files %d %d\n" % (sizes["a.bin"], sizes["b.bin"]))
    return "".join(out)


def words(texts):
    """Dictionary entries: keys (with their colon) and scalar words of YAML texts."""
    found = set()
    for t in texts:
        for key in re.findall(r"([A-Za-z_][A-Za-z0-9_]*):", t):
            found.add(key + ":")
        for w in re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", t):
            if len(w) < 40:
                found.add(w)
    return sorted(found)


def write_dict(path, entries, extra=()):
    with open(path, "w") as f:
        for e in list(entries) + list(extra):
            f.write('"%s"\n' % "".join(c if c.isprintable() and c not in '"\\' else "\\x%02X" % ord(c) for c in e))


def copy_hand_made(name, dest):
    for p in sorted(glob.glob(os.path.join(ROOT, "tests", "fuzz", "seeds", name, "*"))):
        shutil.copy(p, os.path.join(dest, "seed_" + os.path.basename(p)))


def main():
    out, seed_maker = sys.argv[1], sys.argv[2]
    corpus = os.path.join(out, "seeds")
    dicts = os.path.join(out, "dict")
    shutil.rmtree(corpus, ignore_errors=True)
    os.makedirs(dicts, exist_ok=True)
    names = ["golden_case", "scenario", "arch_config", "validation", "descriptor_codec",
             "driver_descriptor", "reference_engine", "trace"]
    for n in names:
        os.makedirs(os.path.join(corpus, n))

    golden_texts = []
    for p in sorted(glob.glob(os.path.join(GOLDEN, "*.yaml"))):
        text = golden_seed(p)
        golden_texts.append(text)
        with open(os.path.join(corpus, "golden_case", os.path.basename(p)), "w") as f:
            f.write(text)
    for p in sorted(glob.glob(os.path.join(GOLDEN, "*.desc"))):
        shutil.copy(p, os.path.join(corpus, "driver_descriptor", os.path.basename(p)))

    config_texts = []
    for p in sorted(glob.glob(os.path.join(ROOT, "configs", "**", "*.yaml"), recursive=True)):
        rel = os.path.relpath(p, os.path.join(ROOT, "configs")).replace(os.sep, "_")
        with open(p) as f:
            config_texts.append(f.read())
        for n in ("scenario", "arch_config"):
            shutil.copy(p, os.path.join(corpus, n, rel))

    subprocess.run([seed_maker, corpus, GOLDEN], check=True, stdout=subprocess.DEVNULL)
    for n in names:
        copy_hand_made(n, os.path.join(corpus, n))

    trailer = ["#@files ", "#@set ", "\n#@files 128 128\n", "=", "[", "]", "{", "}", ": ", "- ", "~", "null",
               "0x", "-1", ".inf", ".nan", "4294967296", "18446744073709551615", "&a", "*a", "!!str", "<<: "]
    write_dict(os.path.join(dicts, "golden_case.dict"), words(golden_texts), trailer)
    write_dict(os.path.join(dicts, "scenario.dict"), words(config_texts), trailer)
    write_dict(os.path.join(dicts, "arch_config.dict"), words(config_texts), trailer + ["nan", "inf", "1e308"])
    for n in names:
        print("%-18s %5d seeds" % (n, len(os.listdir(os.path.join(corpus, n)))))


if __name__ == "__main__":
    main()
