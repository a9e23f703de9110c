// The client against a hostile server, without sockets: what `perfsim record` and `perfsim query`
// do with a server's answers. The first byte chooses:
//   0 session: an auth byte (none, NTLMSSP or SPNEGO at connect/sign/seal), a program byte, then
//     the server's byte stream: the answer to our bind (bind_ack with its CHALLENGE, bind_nak,
//     fault, ...), the SPNEGO leg's alter_context_resp, then the answers to the calls of
//     `perfsim query` (program even: OpenHKPD, Counter 009 and 238 with a growing buffer, then
//     HKLM's Perflib key and its subkeys) or of a one-sample `perfsim record` of 238 (odd), all
//     through recorder/rpc_channel.h and recorder/client.h. Whatever the server sent, every PDU
//     the client writes must be a well-formed one.
//   1 challenge: an NTLMSSP CHALLENGE given to a client SecurityContext after its NEGOTIATE, raw
//     (u16 length) or built from fields (lengths, offsets, AV pairs that may lie); once
//     established, the rest is a PDU whose signature it checks (no ESS: gss-ntlmssp's).
//   2 spnego: a SPNEGO NegTokenResp after the NegTokenInit, raw (u16 length) or around a built
//     CHALLENGE, then the next leg's token.
//   3 tamper: a real authenticated server (rpc::Association with an account, in memory) answers a
//     call with the input's stub; one byte of its response fragments may be changed. Untampered, the
//     client must get exactly that stub; tampered, the call must fail.
#include <memory>
#include <string>

#include "fuzz/fuzz_client.h"
#include "fuzz/fuzz_input.h"
#include "rpc/association.h"
#include "rpc/auth.h"
#include "rpc/frame.h"
#include "rpc/pdu.h"
#include "winreg/codec.h"

using namespace perfsim;
using fuzz::kWho;

namespace {

// The server's side of the connection, from the input. What the client writes must parse.
class ServerBytes final : public recorder::ByteStream {
 public:
  explicit ServerBytes(ByteView in) : in_(in) {}
  Status write(ByteView b) override {
    rpc::Header h;
    fuzz::require(rpc::parse_header(b, h).ok());
    return Status::Ok();
  }
  Status read_exact(size_t n, Bytes& out) override {
    if (n > in_.size() - pos_) return Status::IOError("receive: End of file");
    out.assign(in_.begin() + pos_, in_.begin() + pos_ + n);
    pos_ += n;
    return Status::Ok();
  }

 private:
  ByteView in_;
  size_t pos_ = 0;
};

void session(fuzz::Input& in) {
  const std::optional<recorder::TcpAuth> auth = fuzz::auth_of(in.u8());
  const bool record = in.u8() & 1;
  std::unique_ptr<rpc::SecurityContext> sec;
  if (auth) fuzz::require(rpc::SecurityContext::client(auth->who, auth->auth_type, sec).ok());
  std::unique_ptr<recorder::Channel> ch;
  if (!recorder::bind_rpc_channel(std::make_unique<ServerBytes>(in.rest()), "hostile:135", "fuzz", auth, std::move(sec),
                                  ch)
           .ok())
    return;
  recorder::WinregClient c(std::move(ch));
  record ? fuzz::record_one(c) : fuzz::collector(c);
}

// A handshake token of u16 length from the input.
ByteView token(fuzz::Input& in) { return in.take(in.u16()); }

// A field of the built CHALLENGE: a declared length and offset that may lie about the bytes.
void put_fields(Bytes& msg, size_t at, size_t len, size_t off, fuzz::Input& in) {
  store_le16(&msg[at], uint16_t(len + int8_t(in.u8())));
  store_le16(&msg[at + 2], uint16_t(len));
  store_le32(&msg[at + 4], uint32_t(off + int8_t(in.u8())));
}

// An NTLMSSP CHALLENGE (MS-NLMP 2.2.1.2) laid out from the input's fields: flags, the target name,
// up to 16 AV pairs (2.2.2.1) whose declared lengths may differ from their bytes, an optional
// MsvAvEOL, and offsets and lengths off by up to +-128. gss-ntlmssp, which parses it, carries no
// coverage hooks, so mutating fields rather than bytes is what reaches its corners.
Bytes built_challenge(fuzz::Input& in) {
  Bytes msg = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0, 2, 0, 0, 0};
  msg.resize(56);
  store_le32(&msg[20], in.u32());  // NegotiateFlags
  const ByteView nonce = in.take(8);
  std::copy(nonce.begin(), nonce.end(), msg.begin() + 24);
  msg[48] = 10;  // Version: 10.0, as Windows sends
  const ByteView name = in.take(2 * in.u8());
  Bytes info;
  for (uint8_t n = in.u8() % 17; n > 0; --n) {
    put_le16(info, in.u16());  // AvId
    const ByteView value = in.take(in.u8());
    put_le16(info, uint16_t(value.size() + int8_t(in.u8())));
    info.insert(info.end(), value.begin(), value.end());
  }
  if (in.u8() & 1) info.insert(info.end(), {0, 0, 0, 0});  // MsvAvEOL
  put_fields(msg, 12, name.size(), 56, in);
  put_fields(msg, 40, info.size(), 56 + name.size(), in);
  msg.insert(msg.end(), name.begin(), name.end());
  msg.insert(msg.end(), info.begin(), info.end());
  return msg;
}

// After the NEGOTIATE: the CHALLENGE (raw, u16 length; or built, kind odd), then a PDU whose
// signature the established context checks (no ESS in the CHALLENGE: gss-ntlmssp checks it).
void challenge(fuzz::Input& in) {
  std::unique_ptr<rpc::SecurityContext> sec;
  fuzz::require(rpc::SecurityContext::client(kWho, rpc::kAuthTypeNtlmssp, sec).ok());
  Bytes negotiate, authenticate;
  fuzz::require(sec->step({}, negotiate).ok());
  const Bytes built = in.u8() & 1 ? built_challenge(in) : Bytes();
  if (!sec->step(built.empty() ? token(in) : ByteView(built), authenticate).ok() || !sec->established()) return;
  Bytes pdu(in.rest().begin(), in.rest().end());
  if (pdu.size() > rpc::kResponseHeaderSize + rpc::kNtlmSignatureSize)
    (void)sec->unprotect(pdu, rpc::kResponseHeaderSize, pdu.size() - rpc::kResponseHeaderSize - 16, pdu[3] & 1);
}

// A DER TLV, definite length.
Bytes der(uint8_t tag, ByteView content) {
  Bytes b = {tag};
  if (content.size() >= 0x80) b.insert(b.end(), {0x82, uint8_t(content.size() >> 8)});
  b.push_back(uint8_t(content.size()));
  b.insert(b.end(), content.begin(), content.end());
  return b;
}

// A NegTokenResp (RFC 4178 4.2.2: accept-incomplete, NTLMSSP) around a built CHALLENGE.
Bytes built_neg_token_resp(fuzz::Input& in) {
  static const uint8_t ntlm_oid[] = {0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a};
  const uint8_t state[] = {0x0a, 0x01, uint8_t(in.u8() % 4)};
  Bytes seq = der(0xa0, state);
  const Bytes mech = der(0xa1, ntlm_oid), tok = der(0xa2, der(0x04, built_challenge(in)));
  seq.insert(seq.end(), mech.begin(), mech.end());
  seq.insert(seq.end(), tok.begin(), tok.end());
  return der(0xa1, der(0x30, seq));
}

// After the NegTokenInit: the NegTokenResp (raw, u16 length; or around a built CHALLENGE, kind
// odd), then the next leg's token.
void spnego(fuzz::Input& in) {
  std::unique_ptr<rpc::SecurityContext> sec;
  fuzz::require(rpc::SecurityContext::client(kWho, rpc::kAuthTypeSpnego, sec).ok());
  Bytes init, out;
  fuzz::require(sec->step({}, init).ok());
  const Bytes built = in.u8() & 1 ? built_neg_token_resp(in) : Bytes();
  if (!sec->step(built.empty() ? token(in) : ByteView(built), out).ok() || sec->established()) return;
  (void)sec->step(token(in), out);
}

// The server of mode 3: a real association with an account; writes are its input, its replies
// are read back, with `flip` XORed into byte `at` of its response fragments (counted over them).
class LiveServer final : public recorder::ByteStream {
 public:
  LiveServer(rpc::AssociationConfig cfg, ByteView answer, size_t at, uint8_t flip)
      : assoc_(std::move(cfg)), answer_(answer), at_(at), flip_(flip) {}
  bool tampered() const { return tampered_; }

  Status write(ByteView b) override {
    in_.insert(in_.end(), b.begin(), b.end());
    size_t len = 0;
    while (rpc::next_pdu_length(in_, 0xffff, len).ok() && len && len <= in_.size()) {
      const Bytes pdu(in_.begin(), in_.begin() + len);
      in_.erase(in_.begin(), in_.begin() + len);
      const rpc::CallHandler h = [this](uint16_t, ByteView, Bytes& out) {
        out.assign(answer_.begin(), answer_.end());
        return 0u;
      };
      for (Bytes& r : assoc_.process(pdu, h).replies) take(std::move(r));
    }
    return Status::Ok();
  }
  Status read_exact(size_t n, Bytes& out) override {
    if (n > out_.size() - pos_) return Status::IOError("receive: End of file");
    out.assign(out_.begin() + pos_, out_.begin() + pos_ + n);
    pos_ += n;
    return Status::Ok();
  }

 private:
  void take(Bytes r) {
    if (r.size() > 2 && r[2] == uint8_t(rpc::PType::kResponse)) {
      if (flip_ && at_ >= seen_ && at_ - seen_ < r.size()) {
        r[at_ - seen_] ^= flip_;
        tampered_ = true;
      }
      seen_ += r.size();
    }
    out_.insert(out_.end(), r.begin(), r.end());
  }

  rpc::Association assoc_;
  ByteView answer_;
  size_t at_;
  uint8_t flip_;
  size_t seen_ = 0;  // response bytes so far
  bool tampered_ = false;
  Bytes in_, out_;
  size_t pos_ = 0;
};

std::shared_ptr<const rpc::AuthService> auth_service() {
  static const std::shared_ptr<const rpc::AuthService> service = [] {
    std::shared_ptr<const rpc::AuthService> s;
    fuzz::require(rpc::AuthService::create({{kWho.user, kWho.password}}, s).ok());
    return s;
  }();
  return service;
}

void tamper(fuzz::Input& in) {
  const uint8_t sel = in.u8();
  recorder::TcpAuth auth{kWho, sel & 1 ? rpc::kAuthTypeSpnego : rpc::kAuthTypeNtlmssp,
                         sel & 2 ? rpc::kAuthLevelPrivacy : rpc::kAuthLevelIntegrity};
  rpc::AssociationConfig cfg;
  cfg.auth = auth_service();
  cfg.max_frag = uint16_t(std::max<uint16_t>(in.u16(), rpc::kMinFragSize));
  const size_t at = in.u16();
  const uint8_t flip = in.u8();
  const size_t repeat = 1 + in.u8() % 32;
  Bytes answer;
  const ByteView stub = in.rest();
  for (size_t i = 0; i < repeat; ++i) answer.insert(answer.end(), stub.begin(), stub.end());
  auto server = std::make_unique<LiveServer>(cfg, answer, at, flip);
  LiveServer& srv = *server;
  std::unique_ptr<rpc::SecurityContext> sec;
  fuzz::require(rpc::SecurityContext::client(auth.who, auth.auth_type, sec).ok());
  std::unique_ptr<recorder::Channel> ch;
  fuzz::require(recorder::bind_rpc_channel(std::move(server), "live:135", "fuzz", auth, std::move(sec), ch).ok());
  Bytes out;
  const Status s = ch->call(winreg::kQueryValue, Bytes(40, 0), out);
  fuzz::require(srv.tampered() ? !s.ok() : s.ok() && out == answer);
}

}  // namespace

// gss-ntlmssp and MIT krb5 keep what their first credential and handshake make for the life of
// the process (tests/lsan-suppressions.txt names both); one full handshake here, before libFuzzer
// counts allocations per input, so only what an input leaks is reported.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  for (uint8_t type : {rpc::kAuthTypeNtlmssp, rpc::kAuthTypeSpnego}) {
    std::unique_ptr<rpc::SecurityContext> client;
    fuzz::require(rpc::SecurityContext::client(kWho, type, client).ok());
    std::unique_ptr<rpc::SecurityContext> server = rpc::SecurityContext::server(auth_service(), type);
    Bytes token, answer;
    for (int leg = 0; leg < 3 && !client->established(); ++leg) {
      fuzz::require(client->step(answer, token).ok());
      if (!token.empty()) fuzz::require(server->step(token, answer).ok());
    }
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  switch (in.u8() % 4) {
    case 0:
      session(in);
      break;
    case 1:
      challenge(in);
      break;
    case 2:
      spnego(in);
      break;
    default:
      tamper(in);
      break;
  }
  return 0;
}
