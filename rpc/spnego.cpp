#include "rpc/spnego.h"

#include <algorithm>

namespace perfsim::rpc::spnego {
namespace {

// SPNEGO's OID 1.3.6.1.5.5.2 (RFC 4178 4.1), content octets.
constexpr uint8_t kSpnegoOid[] = {0x2b, 0x06, 0x01, 0x05, 0x05, 0x02};
// A client lists a handful of mechanisms (Kerberos, its variants, NTLMSSP, NegoEx).
constexpr size_t kMaxMechTypes = 16;

Status corrupt(const char* what) {
  return Status::InvalidArgument(std::string("SPNEGO token: ") + what + " (RFC 4178 4.2)");
}

// The OCTET STRING inside an explicit context tag's content.
bool octets(ByteView tagged, ByteView& out) { return der_unwrap(tagged, 0x04, out); }

}  // namespace

bool der_item(const uint8_t*& p, const uint8_t* end, uint8_t& tag, ByteView& content) {
  if (p >= end || (*p & 0x1f) == 0x1f) return false;
  tag = *p++;
  if (p >= end) return false;
  size_t n = *p++;
  if (n & 0x80) {
    size_t k = n & 0x7f;
    if (k == 0 || k > 4 || size_t(end - p) < k) return false;
    n = 0;
    while (k--) n = (n << 8) | *p++;
  }
  if (n > size_t(end - p)) return false;
  content = ByteView(p, n);
  p += n;
  return true;
}

bool der_unwrap(ByteView v, uint8_t want, ByteView& content) {
  const uint8_t* p = v.data();
  const uint8_t* end = p + v.size();
  uint8_t tag = 0;
  return der_item(p, end, tag, content) && tag == want && p == end;
}

void der_put(Bytes& out, uint8_t tag, ByteView content) {
  out.push_back(tag);
  const size_t n = content.size();
  if (n < 0x80) {
    out.push_back(uint8_t(n));
  } else {
    int k = n > 0xffffff ? 4 : n > 0xffff ? 3 : n > 0xff ? 2 : 1;
    out.push_back(uint8_t(0x80 | k));
    while (k--) out.push_back(uint8_t(n >> (8 * k)));
  }
  put_bytes(out, content);
}

Status parse_init(ByteView token, NegTokenInit& out) {
  out = {};
  ByteView app, init, seq;
  if (!der_unwrap(token, 0x60, app)) return corrupt("not an InitialContextToken ([APPLICATION 0])");
  const uint8_t* p = app.data();
  const uint8_t* end = p + app.size();
  uint8_t tag = 0;
  ByteView oid;
  if (!der_item(p, end, tag, oid) || tag != 0x06 || !std::ranges::equal(oid, ByteView(kSpnegoOid)))
    return corrupt("the InitialContextToken's mechanism is not SPNEGO (1.3.6.1.5.5.2)");
  if (!der_unwrap(ByteView(p, size_t(end - p)), 0xa0, init) || !der_unwrap(init, 0x30, seq))
    return corrupt("no NegTokenInit SEQUENCE after the SPNEGO OID");
  p = seq.data();
  end = p + seq.size();
  while (p < end) {
    ByteView field;
    if (!der_item(p, end, tag, field)) return corrupt("a NegTokenInit field's length runs past the token");
    if (tag == 0xa0) {
      ByteView list;
      if (!der_unwrap(field, 0x30, list)) return corrupt("mechTypes is not a SEQUENCE");
      out.mech_types_der = field;
      const uint8_t* q = list.data();
      while (q < list.data() + list.size()) {
        ByteView mech;
        if (!der_item(q, list.data() + list.size(), tag, mech) || tag != 0x06)
          return corrupt("an item of mechTypes is not an OID");
        if (out.mech_types.size() == kMaxMechTypes) return corrupt("more than 16 mechTypes");
        out.mech_types.push_back(mech);
      }
    } else if (tag == 0xa2 || tag == 0xa3) {
      ByteView v;
      if (!octets(field, v))
        return corrupt(tag == 0xa2 ? "mechToken is not an OCTET STRING" : "mechListMIC is not an OCTET STRING");
      (tag == 0xa2 ? out.mech_token : out.mech_list_mic) = v;
    }
  }
  if (out.mech_types.empty()) return corrupt("NegTokenInit without mechTypes");
  return Status::Ok();
}

Status parse_resp(ByteView token, NegTokenResp& out) {
  out = {};
  ByteView body, seq;
  if (!der_unwrap(token, 0xa1, body) || !der_unwrap(body, 0x30, seq)) return corrupt("not a NegTokenResp");
  const uint8_t* p = seq.data();
  const uint8_t* end = p + seq.size();
  while (p < end) {
    uint8_t tag = 0;
    ByteView field, v;
    if (!der_item(p, end, tag, field)) return corrupt("a NegTokenResp field's length runs past the token");
    if (tag == 0xa0) {
      if (!der_unwrap(field, 0x0a, v) || v.size() != 1) return corrupt("negState is not a one-octet ENUMERATED");
      out.neg_state = v[0];
    } else if (tag == 0xa1) {
      if (!der_unwrap(field, 0x06, v)) return corrupt("supportedMech is not an OID");
      out.supported_mech = v;
    } else if (tag == 0xa2 || tag == 0xa3) {
      if (!octets(field, v)) return corrupt("responseToken or mechListMIC is not an OCTET STRING");
      (tag == 0xa2 ? out.response_token : out.mech_list_mic) = v;
    }
  }
  return Status::Ok();
}

Bytes build_resp(uint8_t neg_state, bool ntlm_mech, ByteView response_token, ByteView mech_list_mic) {
  Bytes seq, item;
  const uint8_t state[] = {neg_state};
  der_put(item, 0x0a, state);
  der_put(seq, 0xa0, item);
  if (ntlm_mech) {
    item.clear();
    der_put(item, 0x06, kNtlmsspOid);
    der_put(seq, 0xa1, item);
  }
  for (auto [tag, v] : {std::pair{uint8_t(0xa2), response_token}, {uint8_t(0xa3), mech_list_mic}}) {
    if (v.empty()) continue;
    item.clear();
    der_put(item, 0x04, v);
    der_put(seq, tag, item);
  }
  Bytes body, out;
  der_put(body, 0x30, seq);
  der_put(out, 0xa1, body);
  return out;
}

}  // namespace perfsim::rpc::spnego
