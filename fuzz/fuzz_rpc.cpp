// DCE/RPC: every PDU body parser on the input taken as one PDU, then the input cut into PDUs as a
// transport cuts a stream (rpc/frame.h) and fed to two associations: the copying path (process
// with a CallHandler) and the serving path (gathered replies) must send the same bytes.
#include "fuzz/fuzz_input.h"
#include "rpc/association.h"
#include "rpc/frame.h"
#include "rpc/pdu.h"

using namespace perfsim;

namespace {

void parse_one(ByteView pdu) {
  rpc::Header h;
  if (!rpc::parse_header(pdu, h).ok()) return;
  switch (h.ptype) {
    case rpc::PType::kBind:
    case rpc::PType::kAlterContext: {
      rpc::Bind b;
      (void)rpc::parse_bind(pdu, h, b);
      break;
    }
    case rpc::PType::kBindAck:
    case rpc::PType::kAlterContextResp: {
      rpc::BindAck a;
      (void)rpc::parse_bind_ack(pdu, h, a);
      break;
    }
    case rpc::PType::kBindNak: {
      rpc::BindNak n;
      (void)rpc::parse_bind_nak(pdu, h, n);
      break;
    }
    case rpc::PType::kRequest: {
      rpc::Request r;
      (void)rpc::parse_request(pdu, h, r);
      break;
    }
    case rpc::PType::kResponse: {
      rpc::Response r;
      (void)rpc::parse_response(pdu, h, r);
      break;
    }
    case rpc::PType::kFault: {
      rpc::Fault f;
      (void)rpc::parse_fault(pdu, h, f);
      break;
    }
    default:
      break;
  }
}

// The interface: opnum 0 echoes the stub four times (responses of several fragments), opnum 1
// faults, anything else answers empty.
uint32_t answer(uint16_t opnum, ByteView in, Bytes& out) {
  if (opnum == 1) return rpc::kFaultBadStubData;
  if (opnum == 0)
    for (int i = 0; i < 4; ++i) out.insert(out.end(), in.begin(), in.end());
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ByteView in(data, size);
  parse_one(in);

  rpc::AssociationConfig cfg;
  cfg.max_frag = 256;  // small: requests and responses fragment
  cfg.max_request_stub = 64 * 1024;
  rpc::Association copying(cfg), gathering(cfg);
  const rpc::CallHandler plain = answer;
  const rpc::GatherCallHandler gather = [](uint16_t opnum, ByteView stub, ByteChain& out) {
    Bytes b;
    const uint32_t fault = answer(opnum, stub, b);
    out.append(b);
    return fault;
  };
  size_t off = 0;
  while (off < size) {
    size_t len = 0;
    if (!rpc::next_pdu_length(in.subspan(off), 0xffff, len).ok() || len == 0 || len > size - off) break;
    const ByteView pdu = in.subspan(off, len);
    off += len;
    parse_one(pdu);
    const rpc::Step step = copying.process(pdu, plain);
    std::vector<ByteChain> chains;
    const bool close = gathering.process(pdu, gather, chains);
    fuzz::require(close == step.close && chains.size() == step.replies.size());
    for (size_t i = 0; i < chains.size(); ++i) fuzz::require(chains[i].flatten() == step.replies[i]);
    if (step.close) break;
  }
  return 0;
}
