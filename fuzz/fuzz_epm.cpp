// The endpoint mapper (epm/, server/epm_handler.h) on a host that registers winreg twice and a
// newer minor version (so lookups have batches and handles to walk). The first byte chooses:
//  - even: stubs, each as u8 opnum, u16 length, stub, all on one epm::Service (a lookup handle one
//    call returns is good for the next); every stub also through each decoder, whose result must
//    re-encode stably, and through the tower parser, likewise; an answered call's response stub
//    must decode.
//  - odd: a client byte stream cut into PDUs through an EpmHandler (the DCE/RPC association bound
//    to the mapper's interface, then the Service), a well-formed bind first when bit 1 is set.
#include <memory>

#include "epm/codec.h"
#include "epm/service.h"
#include "fuzz/fuzz_input.h"
#include "rpc/frame.h"
#include "server/epm_handler.h"

using namespace perfsim;

namespace {

std::vector<epm::Registration> registrations() {
  rpc::SyntaxId newer = rpc::winreg_syntax();
  newer.version_minor = 1;
  return {{rpc::winreg_syntax(), {127, 0, 0, 7}, 49153, ""},
          {rpc::winreg_syntax(), {127, 0, 0, 7}, 49154, "second"},
          {newer, {0, 0, 0, 0}, 1, std::string(63, 'a')}};
}

// What a decoder takes, encoded and decoded again, encodes to the same bytes.
template <typename T>
void round_trip(ByteView stub) {
  T first;
  if (!epm::decode(stub, first).ok()) return;
  const Bytes once = epm::encode(first);
  T second;
  fuzz::require(epm::decode(once, second).ok());
  fuzz::require(epm::encode(second) == once);
}

void tower_round_trip(ByteView bytes) {
  std::vector<epm::Floor> floors, again;
  if (!epm::parse_floors(bytes, floors).ok()) return;
  const Bytes built = epm::build_floors(floors);
  fuzz::require(epm::parse_floors(built, again).ok());
  fuzz::require(epm::build_floors(again) == built);
  for (const epm::Floor& f : floors) {
    rpc::SyntaxId s;
    if (epm::parse_syntax_floor(f, s).ok()) {
      rpc::SyntaxId back;
      fuzz::require(epm::parse_syntax_floor(epm::syntax_floor(s), back).ok() && back == s);
    }
  }
}

void stubs(fuzz::Input& in) {
  epm::Service svc(registrations());
  while (!in.empty()) {
    const uint16_t opnum = in.u8();
    const ByteView stub = in.take(in.u16());
    round_trip<epm::MapRequest>(stub);
    round_trip<epm::LookupRequest>(stub);
    round_trip<epm::MapResponse>(stub);
    round_trip<epm::LookupResponse>(stub);
    tower_round_trip(stub);
    Bytes out;
    if (svc.call(opnum, stub, out) != 0) continue;
    if (opnum == epm::kOpMap) {
      epm::MapResponse m;
      fuzz::require(epm::decode(out, m).ok() && m.towers.size() <= m.max_towers);
    } else if (opnum == epm::kOpLookup) {
      epm::LookupResponse l;
      fuzz::require(epm::decode(out, l).ok() && l.entries.size() <= l.max_ents);
    }
  }
}

Bytes bind_pdu() {
  rpc::Bind b;
  b.max_xmit_frag = b.max_recv_frag = 5840;
  b.contexts.push_back({0, epm::epm_syntax(), {rpc::ndr20_syntax()}});
  return rpc::build_bind(rpc::PType::kBind, 1, b);
}

void stream(bool bind_first, ByteView bytes) {
  rpc::AssociationConfig cfg;
  cfg.interface = epm::epm_syntax();
  cfg.secondary_address = "135";
  server::EpmHandler handler(cfg, registrations());
  std::vector<ByteChain> out;
  if (bind_first) fuzz::require(handler.on_pdu(bind_pdu(), out) == server::Verdict::kContinue);
  size_t off = 0;
  while (off < bytes.size()) {
    size_t len = 0;
    if (!rpc::next_pdu_length(bytes.subspan(off), 0xffff, len).ok() || len == 0 || len > bytes.size() - off) break;
    out.clear();
    if (handler.on_pdu(bytes.subspan(off, len), out) != server::Verdict::kContinue) break;
    off += len;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const uint8_t mode = in.u8();
  if (mode & 1)
    stream(mode & 2, in.rest());
  else
    stubs(in);
  return 0;
}
