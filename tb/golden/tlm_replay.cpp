#include "tma/golden/tlm_replay.h"

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "tma/descriptor/descriptor_codec.h"
#include "tma/descriptor/descriptor_validation.h"
#include "tma/gpu/gpu_system.h"

namespace tma {

namespace {

class ReplayIssuer : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<ReplayIssuer> cmd_out;
  tlm_utils::simple_target_socket<ReplayIssuer> completion_in;
  tlm_utils::simple_initiator_socket<ReplayIssuer> lsu_out;  // unused: replays read shared memory directly

  ReplayIssuer(sc_core::sc_module_name name, GpuSystem& gpu, const std::vector<GoldenCase>& cases,
               const std::function<void(const GoldenCase&, const CaseVerdict&)>& report)
      : sc_module(name), cmd_out("cmd_out"), completion_in("completion_in"), lsu_out("lsu_out"), gpu_(gpu), cases_(cases),
        report_(report) {
    completion_in.register_b_transport(this, &ReplayIssuer::completed);
    SC_HAS_PROCESS(ReplayIssuer);
    SC_THREAD(run);
  }

 private:
  void completed(tlm::tlm_generic_payload& gp, sc_core::sc_time&) {
    if (const TmaCompletion* c = gp.get_extension<TmaCompletion>()) {
      last_ = *c;
      done_.notify(sc_core::SC_ZERO_TIME);
    }
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
  }

  // The pipeline as a CaseEngine: stage the case in memory, issue, wait, read back.
  OpResult execute(const GoldenCase& c, size_t index, std::vector<uint8_t>& global, std::vector<uint8_t>& smem) {
    OpResult r;
    if (auto err = validate_tensor_map(c.map, c.arch)) {
      r.outcome = Outcome::encode_error;
      r.reason = err->rule + ": " + err->message;
      return r;
    }
    const uint64_t base = (static_cast<uint64_t>(index) + 1) << 34;
    const uint64_t desc_addr = base - 4096;
    GlobalMemory& mem = gpu_.memory();
    mem.write(base, global.data(), global.size());
    TensorMap m = c.map;
    m.global_address += base;
    try {
      const std::array<uint8_t, 128> d = encode_descriptor(m);
      mem.write(desc_addr, d.data(), d.size());
    } catch (const std::exception& e) {
      r.outcome = Outcome::fault;
      r.reason = std::string("descriptor cannot be encoded: ") + e.what();
      return r;
    }
    std::vector<uint8_t>& unit_smem = gpu_.unit(0).smem().bytes();
    std::copy(smem.begin(), smem.begin() + std::min(smem.size(), unit_smem.size()), unit_smem.begin());

    TmaCommand cmd;
    cmd.op = c.op;
    cmd.descriptor_address = desc_addr;
    cmd.op_id = index + 1;
    tlm::tlm_generic_payload gp;
    gp.set_command(tlm::TLM_WRITE_COMMAND);
    gp.set_data_length(0);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    {
      ScopedExtension<TmaCommand> ext(gp, &cmd);
      cmd_out->b_transport(gp, delay);
    }
    do {
      sc_core::wait(done_);
    } while (last_.op_id != cmd.op_id);

    mem.read(base, global.data(), global.size());
    std::copy(unit_smem.begin(), unit_smem.begin() + std::min(smem.size(), unit_smem.size()), smem.begin());
    r.outcome = last_.outcome == OpOutcome::ok ? Outcome::ok : Outcome::fault;
    r.tx_bytes = last_.tx_bytes;
    return r;
  }

  void run() {
    for (size_t i = 0; i < cases_.size(); ++i) {
      const GoldenCase& c = cases_[i];
      const CaseVerdict v = check_case(c, [&](const GoldenCase& gc, std::vector<uint8_t>& g, std::vector<uint8_t>& s) {
        return execute(gc, i, g, s);
      });
      report_(c, v);
    }
    sc_core::sc_stop();
  }

  GpuSystem& gpu_;
  const std::vector<GoldenCase>& cases_;
  std::function<void(const GoldenCase&, const CaseVerdict&)> report_;
  sc_core::sc_event done_;
  TmaCompletion last_;
};

}  // namespace

void replay_through_tlm(const std::vector<GoldenCase>& cases, const ArchConfig& arch,
                        const std::function<void(const GoldenCase&, const CaseVerdict&)>& report) {
  ArchConfig one = arch;
  GpuSystem gpu("gpu", one, 1, 1, cases.empty() ? GpuArch::sm90 : cases.front().arch, MemoryFill::zero);
  ReplayIssuer issuer("replay", gpu, cases, report);
  issuer.cmd_out.bind(gpu.unit(0).cmd_in);
  issuer.lsu_out.bind(gpu.unit(0).smem().lsu_in);
  gpu.fabric().completion_out.bind(issuer.completion_in);
  sc_core::sc_start();
  gpu.check_drained();
  if (gpu.invariants().violations()) {
    GoldenCase none;
    none.name = "model invariants";
    CaseVerdict v;
    v.message = "model invariants: " + std::to_string(gpu.invariants().violations()) + " violations, first: " +
                gpu.invariants().first_violations().front();
    report(none, v);
  }
}

}  // namespace tma
