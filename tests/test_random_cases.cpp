// The constrained-random generator (tb/random_cases.h) and the functional coverage (tb/coverage.h):
// determinism of the seed/index scheme, every case keeping its intent under the reference engine and
// validation, golden-file round trips, and the coverage database (declare, sample, JSON, merge, report).
#define BOOST_TEST_MODULE random_cases
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "tma/regress/coverage.h"
#include "tma/descriptor/descriptor_validation.h"
#include "tma/golden/golden_check.h"
#include "tma/regress/random_cases.h"
#include "tma/regress/random_prng.h"

// Linked with tma_regress, so with libsystemc, which wants an sc_main (the ASan build keeps the
// library; Boost.Test provides main).
extern "C" int sc_main(int, char**) { return 0; }

using namespace tma;

namespace {

const std::vector<RandomOptions> kProfiles = {{GpuArch::sm90, false}, {GpuArch::sm100, false}, {GpuArch::sm100, true}};

bool same_case(const RandomCase& a, const RandomCase& b) {
  return serialize_random_case(a) == serialize_random_case(b) && a.golden.smem_image == b.golden.smem_image &&
         a.golden.global_window == b.golden.global_window && a.golden.map == b.golden.map;
}

}  // namespace

// ---------------------------------------------------------------- PRNG

BOOST_AUTO_TEST_CASE(splitmix64_reference_values) {
  uint64_t state = 0;
  BOOST_TEST(splitmix64_next(state) == 0xe220a8397b1dcdafull);
  BOOST_TEST(splitmix64_next(state) == 0x6e789e6aa1b965f4ull);
  BOOST_TEST(splitmix64_next(state) == 0x06c45d188009454full);
}

BOOST_AUTO_TEST_CASE(stream_is_keyed_by_seed_and_index) {
  RandomStream a(1, 5), b(1, 5), c(1, 6), d(2, 5);
  const uint64_t a0 = a.next();
  BOOST_TEST(a0 == b.next());
  BOOST_TEST(a0 != c.next());
  BOOST_TEST(a0 != d.next());
  // Pinned: the stream of (seed 1, index 0) must never change, or every recorded replay breaks.
  RandomStream pinned(1, 0);
  const uint64_t expected = splitmix64_mix(splitmix64_mix(1) ^ splitmix64_mix(~uint64_t{0}));
  uint64_t state = expected;
  BOOST_TEST(pinned.next() == splitmix64_next(state));
}

BOOST_AUTO_TEST_CASE(bounded_integers_stay_in_range) {
  RandomStream r(42, 0);
  std::map<int64_t, int> seen;
  for (int i = 0; i < 20000; ++i) {
    const int64_t v = r.range(-3, 4);
    BOOST_REQUIRE(v >= -3);
    BOOST_REQUIRE(v <= 4);
    ++seen[v];
    BOOST_REQUIRE(r.below(7) < 7);
  }
  BOOST_TEST(seen.size() == 8u);
  for (const auto& [v, n] : seen) BOOST_TEST(n > 2000);  // 2500 expected each
  BOOST_TEST(r.range(5, 5) == 5);
  BOOST_TEST(r.below(0) == 0u);
  BOOST_TEST(r.range(INT64_MIN, INT64_MAX) != r.range(INT64_MIN, INT64_MAX));  // full range works
}

// ---------------------------------------------------------------- determinism

BOOST_AUTO_TEST_CASE(same_seed_gives_identical_cases) {
  for (const RandomOptions& opt : kProfiles) {
    const std::vector<RandomCase> a = generate_random_cases(7, 0, 300, opt);
    const std::vector<RandomCase> b = generate_random_cases(7, 0, 300, opt);
    BOOST_REQUIRE(a.size() == 300u);
    for (size_t i = 0; i < a.size(); ++i) BOOST_TEST(same_case(a[i], b[i]), "case " << i);
  }
}

BOOST_AUTO_TEST_CASE(different_seeds_give_different_cases) {
  const std::vector<RandomCase> a = generate_random_cases(1, 0, 200);
  const std::vector<RandomCase> b = generate_random_cases(2, 0, 200);
  int differ = 0;
  for (size_t i = 0; i < a.size(); ++i) differ += a[i].golden.map != b[i].golden.map ? 1 : 0;
  BOOST_TEST(differ >= 195);
  // and neighbouring indices of one seed differ too
  int neighbours = 0;
  for (size_t i = 1; i < a.size(); ++i) neighbours += a[i].golden.map != a[i - 1].golden.map ? 1 : 0;
  BOOST_TEST(neighbours >= 195);
}

BOOST_AUTO_TEST_CASE(case_regenerated_alone_equals_case_of_a_batch) {
  for (const RandomOptions& opt : kProfiles) {
    const std::vector<RandomCase> batch = generate_random_cases(3, 100, 200, opt);
    for (uint64_t k : {100u, 101u, 177u, 299u}) {
      const RandomCase alone = generate_random_case(3, k, opt);
      BOOST_TEST(alone.index == k);
      BOOST_TEST(same_case(alone, batch[k - 100]), "case " << k);
    }
    const std::vector<RandomCase> part = generate_random_cases(3, 250, 20, opt);
    for (size_t i = 0; i < part.size(); ++i) BOOST_TEST(same_case(part[i], batch[150 + i]));
  }
}

// ---------------------------------------------------------------- intents

BOOST_AUTO_TEST_CASE(every_case_keeps_its_intent) {
  for (const RandomOptions& opt : kProfiles) {
    const std::vector<RandomCase> cases = generate_random_cases(11, 0, 3000, opt);
    std::set<std::string> rules, faults;
    int valid = 0;
    for (const RandomCase& c : cases) {
      const std::string why = check_random_intent(c);
      BOOST_TEST(why.empty(), c.golden.name << " (" << random_profile(opt) << "): " << why);
      const auto err = validate_tensor_map(c.golden.map, c.golden.arch);
      if (c.intent == "valid") {
        ++valid;
        BOOST_TEST(!err.has_value(), c.golden.name);
        BOOST_TEST((c.golden.outcome == Outcome::ok), c.golden.name);
      } else if (c.intent.rfind("encode_error:", 0) == 0) {
        // refused by exactly the rule it was built to break
        BOOST_REQUIRE_MESSAGE(err.has_value(), c.golden.name);
        BOOST_TEST(err->rule == c.intent.substr(13), c.golden.name);
        BOOST_TEST((c.golden.outcome == Outcome::encode_error), c.golden.name);
        rules.insert(err->rule);
      } else {
        BOOST_REQUIRE(c.intent.rfind("fault:", 0) == 0);
        BOOST_TEST(!err.has_value(), c.golden.name);
        BOOST_TEST((c.golden.outcome == Outcome::fault), c.golden.name);
        faults.insert(c.intent.substr(6));
      }
    }
    BOOST_TEST(valid > 1500);
    // every rule and fault kind of the profile shows up in 3000 cases
    for (const std::string& r : random_validation_rules(opt)) BOOST_TEST(rules.count(r) == 1u, random_profile(opt) << " " << r);
    for (const std::string& f : random_fault_kinds(opt)) BOOST_TEST(faults.count(f) == 1u, random_profile(opt) << " " << f);
  }
}

BOOST_AUTO_TEST_CASE(default_profiles_stay_inside_what_the_pipeline_models) {
  for (const RandomOptions& opt : {kProfiles[0], kProfiles[1]})
    for (const RandomCase& c : generate_random_cases(5, 0, 1000, opt))
      if (c.golden.outcome != Outcome::encode_error) BOOST_TEST(!is_blackwell_form(c.golden.map), c.golden.name);
}

BOOST_AUTO_TEST_CASE(expectations_are_small) {
  for (const RandomCase& c : generate_random_cases(9, 0, 500)) {
    BOOST_TEST(c.golden.global_size <= 1024u * 1024u, c.golden.name);
    BOOST_TEST(c.golden.smem_image.size() <= 228u * 1024u);
  }
}

// ---------------------------------------------------------------- golden files

BOOST_AUTO_TEST_CASE(written_cases_load_and_replay) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("tma_random_cases_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  for (const RandomOptions& opt : kProfiles) {
    for (const RandomCase& c : generate_random_cases(13, 0, 60, opt)) {
      write_random_case(c, dir.string());
      const GoldenCase loaded = load_golden_case((dir / (c.golden.name + ".yaml")).string());
      RandomCase again = c;
      again.golden = loaded;
      BOOST_TEST(serialize_random_case(again) == serialize_random_case(c), c.golden.name);
      const CaseVerdict v = check_case(loaded, run_reference);
      BOOST_TEST(v.passed, v.message);
    }
    fs::remove_all(dir);
  }
}

// ---------------------------------------------------------------- coverage

namespace {

// A 2D u16 load: box 16 x 4 at (-8, 2) of a 40 x 5 tensor: dimension 0 low, dimension 1 high.
GoldenCase small_load() {
  GoldenCase c;
  c.name = "hand";
  c.arch = GpuArch::sm90;
  c.global_size = 65536;
  c.map.mode = TensorMode::tiled;
  c.map.dtype = DataType::u16;
  c.map.rank = 2;
  c.map.dims = {40, 5};
  c.map.strides = {96};
  c.map.box = {16, 4};
  c.map.swizzle = SwizzleMode::b32;
  c.op.coords = {-8, 2};
  c.op.smem_addr = 3 * 128;
  c.outcome = Outcome::ok;
  return c;
}

}  // namespace

BOOST_AUTO_TEST_CASE(oob_kinds_per_dimension) {
  GoldenCase c = small_load();
  auto k = oob_kinds(c.map, c.op);
  BOOST_TEST((k[0] == OobKind::low));
  BOOST_TEST((k[1] == OobKind::high));
  BOOST_TEST((oob_aggregate(k, 2) == OobKind::both));
  c.op.coords = {0, 0};
  k = oob_kinds(c.map, c.op);
  BOOST_TEST((oob_aggregate(k, 2) == OobKind::none));
  c.op.coords = {48, 0};  // dimension 0 entirely past the end
  k = oob_kinds(c.map, c.op);
  BOOST_TEST((k[0] == OobKind::outside));
  BOOST_TEST((oob_aggregate(k, 2) == OobKind::outside));
  c.map.box = {64, 1};  // box larger than the tensor on both sides: -8 .. 55 of 0 .. 39
  c.op.coords = {-8, 0};
  BOOST_TEST((oob_kinds(c.map, c.op)[0] == OobKind::both));
  // element strides skip positions: 0, 3, 6 of a 5-row dimension from -3: -3, 0, 3 -> low only
  c.map.box = {16, 7};
  c.map.element_strides = {1, 3};
  c.op.coords = {0, -3};
  BOOST_TEST((oob_kinds(c.map, c.op)[1] == OobKind::low));
}

BOOST_AUTO_TEST_CASE(declared_bins_exclude_the_impossible) {
  CoverageDb db;
  db.declare(kProfiles[0]);
  const CoverageBins& rmi = db.crosses.at("rank x mode x interleave");
  BOOST_TEST(rmi.count("1/tiled/16B") == 0u);   // interleave needs rank >= 3
  BOOST_TEST(rmi.count("2/tiled/32B") == 0u);
  BOOST_TEST(rmi.count("2/im2col/none") == 0u);  // im2col needs rank >= 3
  BOOST_TEST(rmi.count("3/im2col/16B") == 0u);   // im2col with interleave is not generated
  BOOST_TEST(rmi.count("3/tiled/32B") == 1u);
  BOOST_TEST(rmi.size() == 14u);
  const CoverageBins& fill = db.crosses.at("oob_fill x dtype");
  BOOST_TEST(fill.count("nan/u8") == 0u);  // NaN fill is refused for integer types
  BOOST_TEST(fill.count("nan/bf16") == 1u);
  BOOST_TEST(fill.count("zero/u8") == 1u);
  BOOST_TEST(db.groups.at("swizzle").count("96B") == 0u);  // sm_90 has no 96B swizzle
  BOOST_TEST(db.groups.at("validation_rule").count("arch.sm90_swizzle_96B") == 1u);
  BOOST_TEST(db.crosses.at("validation_rule x mode").count("boxDim.range/im2col") == 0u);  // im2col has no box

  CoverageDb bw;
  bw.declare(kProfiles[2]);
  BOOST_TEST(bw.groups.at("swizzle").count("96B") == 1u);
  BOOST_TEST(bw.groups.at("validation_rule").count("arch.sm90_swizzle_96B") == 0u);
  const CoverageBins& sdmo = bw.crosses.at("swizzle x dtype x mode x oob");
  BOOST_TEST(sdmo.count("32B/f16/im2col_w/none") == 0u);        // the wide forms take 64B, 128B, 128B_atom_32B
  BOOST_TEST(sdmo.count("64B/b4x16_p64/tiled/none") == 0u);     // not a b4x16_p64 swizzle
  BOOST_TEST(sdmo.count("128B_atom_64B/b6x16_p32/im2col/none") == 0u);  // store-only, im2col has no store
  BOOST_TEST(sdmo.count("128B_atom_64B/b6x16_p32/tiled/low") == 0u);    // stores take no negative coordinate
  BOOST_TEST(sdmo.count("128B_atom_64B/b6x16_p32/tiled/high") == 1u);
  BOOST_TEST(bw.crosses.at("rank x mode x interleave").count("2/gather4/none") == 1u);
  BOOST_TEST(bw.crosses.at("rank x mode x interleave").count("3/gather4/none") == 0u);
}

BOOST_AUTO_TEST_CASE(sampling_hits_the_right_bins) {
  CoverageDb db;
  db.declare(kProfiles[0]);
  db.sample(small_load(), "valid");
  BOOST_TEST(db.cases == 1u);
  BOOST_TEST(db.groups["mode"]["tiled"] == 1u);
  BOOST_TEST(db.groups["dtype"]["u16"] == 1u);
  BOOST_TEST(db.groups["rank"]["2"] == 1u);
  BOOST_TEST(db.groups["swizzle"]["32B"] == 1u);
  BOOST_TEST(db.groups["smem_phase"]["3"] == 1u);
  BOOST_TEST(db.groups["oob"]["dim0:low"] == 1u);
  BOOST_TEST(db.groups["oob"]["dim1:high"] == 1u);
  BOOST_TEST(db.groups["outcome"]["ok"] == 1u);
  BOOST_TEST(db.crosses["swizzle x dtype x mode x oob"]["32B/u16/tiled/both"] == 1u);
  BOOST_TEST(db.crosses["op x dtype"]["load/u16"] == 1u);
  BOOST_TEST(db.crosses["rank x mode x interleave"]["2/tiled/none"] == 1u);
  BOOST_TEST(db.crosses["swizzle x smem_phase"]["32B/3"] == 1u);
  BOOST_TEST(db.crosses["oob_fill x dtype"]["zero/u16"] == 1u);

  GoldenCase refused = small_load();
  refused.map.strides = {100};
  refused.outcome = Outcome::encode_error;
  db.sample(refused, "encode_error:globalStrides.multiple_of_16");
  BOOST_TEST(db.groups["validation_rule"]["globalStrides.multiple_of_16"] == 1u);
  BOOST_TEST(db.crosses["validation_rule x mode"]["globalStrides.multiple_of_16/tiled"] == 1u);
  BOOST_TEST(db.groups["mode"]["tiled"] == 1u);  // refused descriptors count only as rules

  GoldenCase trap = small_load();
  trap.op.smem_addr = 3 * 128 + 16;
  trap.outcome = Outcome::fault;
  db.sample(trap, "fault:smem_misaligned");
  BOOST_TEST(db.groups["fault_kind"]["smem_misaligned"] == 1u);
  BOOST_TEST(db.groups["smem_phase"]["misaligned"] == 1u);
  BOOST_TEST(db.groups["oob"]["dim0:low"] == 1u);  // a trapping operation moves no data
}

BOOST_AUTO_TEST_CASE(json_round_trip_is_exact_and_sorted) {
  CoverageDb db;
  db.declare(kProfiles[1]);
  for (const RandomCase& c : generate_random_cases(21, 0, 200, kProfiles[1])) db.sample(c.golden, c.intent);
  const std::string json = db.to_json();
  const CoverageDb back = CoverageDb::from_json(json);
  BOOST_TEST(back.to_json() == json);
  BOOST_TEST(back.cases == 200u);
  BOOST_TEST(back.profiles == std::set<std::string>{"sm_100"});
  // Sampling order does not matter: the JSON is the same.
  CoverageDb reversed;
  reversed.declare(kProfiles[1]);
  const std::vector<RandomCase> cases = generate_random_cases(21, 0, 200, kProfiles[1]);
  for (auto it = cases.rbegin(); it != cases.rend(); ++it) reversed.sample(it->golden, it->intent);
  BOOST_TEST(reversed.to_json() == json);
  BOOST_CHECK_THROW(CoverageDb::from_json("{\"schema\": \"other\"}"), std::runtime_error);
  BOOST_CHECK_THROW(CoverageDb::from_json("{\"schema\": \"tma-coverage/1\", \"cases\": -1}"), std::runtime_error);
  BOOST_CHECK_THROW(CoverageDb::from_json("{\"cases\": 1}"), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(merge_adds_hits_and_unites_bins) {
  CoverageDb a, b;
  a.declare(kProfiles[0]);
  b.declare(kProfiles[2]);
  a.sample(small_load(), "valid");
  b.sample(small_load(), "valid");
  b.sample(small_load(), "valid");
  CoverageDb m = a;
  m.merge(b);
  BOOST_TEST(m.cases == 3u);
  BOOST_TEST(m.profiles == (std::set<std::string>{"sm_90", "sm_100+blackwell"}));
  BOOST_TEST(m.groups["dtype"]["u16"] == 3u);
  BOOST_TEST(m.groups["dtype"].count("b4x16") == 1u);          // declared by the Blackwell profile only
  BOOST_TEST(m.groups["validation_rule"].count("arch.sm90_sub_byte_type") == 1u);  // by sm_90 only
  BOOST_TEST(m.groups["dtype"].size() == 16u);
  // merging through JSON gives the same
  CoverageDb j = CoverageDb::from_json(a.to_json());
  j.merge(CoverageDb::from_json(b.to_json()));
  BOOST_TEST(j.to_json() == m.to_json());
}

BOOST_AUTO_TEST_CASE(report_lists_hit_over_total_and_holes) {
  CoverageDb db;
  db.declare(kProfiles[0]);
  db.sample(small_load(), "valid");
  const std::string r = db.report(5);
  BOOST_TEST(r.find("coverage of 1 cases (profiles: sm_90)") != std::string::npos);
  BOOST_TEST(r.find("  mode                                   1/2 ") != std::string::npos, r);
  BOOST_TEST(r.find("  rank                                   1/5 ") != std::string::npos, r);
  BOOST_TEST(r.find("holes (bins never hit)") != std::string::npos);
  BOOST_TEST(r.find("  mode (1): im2col") != std::string::npos, r);
  BOOST_TEST(r.find("... and") != std::string::npos);  // long hole lists are cut at 5

  CoverageDb full;
  full.declare(kProfiles[0]);
  for (uint64_t k = 0; k < 20000; ++k) {  // one at a time: 20000 cases' images would not fit comfortably
    const RandomCase c = generate_random_case(1, k);
    full.sample(c.golden, c.intent);
  }
  const std::string fr = full.report(0);
  BOOST_TEST(fr.find("all bins") != std::string::npos);
  BOOST_TEST(fr.find("holes (bins never hit)\n  none\n") != std::string::npos, fr);  // seed 1 closes sm_90 at 20000
}
