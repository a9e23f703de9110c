#include "rpc/auth.h"

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <openssl/crypto.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <utility>

#include "rpc/ntlm_challenge.h"
#include "rpc/ntlm_crypto.h"
#include "rpc/ntlm_session.h"
#include "rpc/ntlmssp.h"
#include "rpc/pdu.h"
#include "rpc/spnego.h"

namespace perfsim::rpc {
namespace {

using ntlm::Direction;
using ntlm::Key16;

// gss-ntlmssp's mechanism OID (1.3.6.1.4.1.311.2.2.10) and SPNEGO's (1.3.6.1.5.5.2): the client side.
gss_OID_desc kNtlmsspOid = {10, const_cast<char*>("\x2b\x06\x01\x04\x01\x82\x37\x02\x02\x0a")};
gss_OID_desc kSpnegoOid = {6, const_cast<char*>("\x2b\x06\x01\x05\x05\x02")};

std::string gss_error(const std::string& what, OM_uint32 major, OM_uint32 minor) {
  std::string out = what + ": ";
  for (int pass = 0; pass < 2; ++pass) {
    OM_uint32 ctx = 0, min2 = 0;
    do {
      gss_buffer_desc msg = GSS_C_EMPTY_BUFFER;
      gss_display_status(&min2, pass == 0 ? major : minor, pass == 0 ? GSS_C_GSS_CODE : GSS_C_MECH_CODE, GSS_C_NO_OID,
                         &ctx, &msg);
      if (msg.length) out.append(static_cast<const char*>(msg.value), msg.length).append("; ");
      gss_release_buffer(&min2, &msg);
    } while (ctx != 0);
  }
  return out;
}

// The NegotiateFlags of the NTLMSSP message of `type` inside a raw or SPNEGO-wrapped token.
bool ntlm_flags(ByteView token, uint32_t type, uint32_t& flags) {
  ByteView m;
  return ntlmssp::find_message(token, m).ok() && ntlmssp::message_type(m) == type && ntlmssp::negotiate_flags(m, flags);
}

bool has_mech_list_mic(ByteView token) {
  spnego::NegTokenResp r;
  return spnego::parse_resp(token, r).ok() && r.mech_list_mic;
}

// A server's handshake token, checked before GSSAPI sees it. Only a client's first leg goes
// without one: MIT's SPNEGO (krb5 1.20) dereferences NULL when a later leg gets none
// (fuzz_client: an alter_context_resp without auth_length). The NTLMSSP CHALLENGE, raw or as a
// NegTokenResp's responseToken, must pass rpc/ntlm_challenge.h: gss-ntlmssp trusts parts of it.
Status check_server_token(uint8_t auth_type, ByteView in) {
  if (in.empty()) return Status::InvalidArgument("the server's answer carries no authentication token for this leg");
  if (auth_type != kAuthTypeSpnego) return check_ntlm_challenge(in);
  spnego::NegTokenResp r;
  if (Status s = spnego::parse_resp(in, r); !s.ok())
    return Status::Corruption("the server's SPNEGO token is not a NegTokenResp (RFC 4178 4.2.2)");
  return r.response_token ? check_ntlm_challenge(*r.response_token) : Status::Ok();
}

}  // namespace

Status parse_sec_trailer(ByteView v, SecTrailer& out) {
  if (v.size() < kSecTrailerSize)
    return Status::Corruption("auth verifier of " + std::to_string(v.size()) + " bytes is shorter than a sec_trailer");
  out.auth_type = v[0];
  out.auth_level = v[1];
  out.pad_length = v[2];
  out.context_id = load_le32(&v[4]);
  out.value = v.subspan(kSecTrailerSize);
  return Status::Ok();
}

Status append_auth(Bytes& pdu, SecTrailer t, ByteView value, size_t align) {
  size_t pad = (align - pdu.size() % align) % align;
  if (pdu.size() + pad + kSecTrailerSize + value.size() > 0xffff || value.size() > 0xffff)
    return Status::InvalidArgument("an authentication token of " + std::to_string(value.size()) +
                                   " bytes makes the PDU larger than one DCE/RPC PDU carries (65,535 bytes)");
  pdu.insert(pdu.end(), pad, 0);
  t.pad_length = uint8_t(pad);
  pdu.push_back(t.auth_type);
  pdu.push_back(t.auth_level);
  pdu.push_back(t.pad_length);
  pdu.push_back(0);
  put_le32(pdu, t.context_id);
  put_bytes(pdu, value);
  store_le16(&pdu[8], uint16_t(pdu.size()));
  store_le16(&pdu[10], uint16_t(value.size()));
  return Status::Ok();
}

Status parse_account(std::string_view text, Account& out) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0)
    return Status::InvalidArgument("account '" + std::string(text.substr(0, colon)) +
                                   "' is not NAME:PASSWORD (e.g. alice:Secret1)");
  std::string_view name = text.substr(0, colon);
  if (size_t bs = name.find_first_of("\\/"); bs != std::string_view::npos) name = name.substr(bs + 1);
  if (name.empty() || name.find_first_of(":\r\n") != std::string_view::npos)
    return Status::InvalidArgument("account name in '" + std::string(text.substr(0, colon)) + "' is empty or invalid");
  out.user = std::string(name);
  out.password = std::string(text.substr(colon + 1));
  if (out.password.find_first_of("\r\n") != std::string::npos)
    return Status::InvalidArgument("the password of account '" + out.user + "' contains a line break");
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// The accounts, in memory only: names and NT hashes (no file, so a crash leaves none behind).
struct AuthService::Impl {
  std::vector<NtlmAccount> accounts;
};

AuthService::AuthService(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
AuthService::~AuthService() = default;

Status AuthService::create(const std::vector<Account>& accounts, std::shared_ptr<const AuthService>& out) {
  if (accounts.empty()) return Status::InvalidArgument("DCE/RPC authentication needs at least one account (--user)");
  if (Status s = ntlm::crypto_status(); !s.ok()) return s;
  auto impl = std::make_unique<Impl>();
  for (const Account& a : accounts)
    if (Status s = make_ntlm_account(a.user, a.password, impl->accounts.emplace_back()); !s.ok()) return s;
  out.reset(new AuthService(std::move(impl)));
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
struct SecurityContext::Impl {
  bool is_server = true;
  uint8_t auth_type = kAuthTypeNtlmssp;
  bool done = false;
  uint32_t flags = 0;                    // negotiated NegotiateFlags
  bool mic_in = false, mic_out = false;  // a SPNEGO leg carried a mechListMIC (client side)
  // Without ESS one RC4 stream and one sequence number serve both directions (Samba's
  // ntlmssp_sign.c keeps a single seal_state and seq_num then; python3-samba refuses our answers
  // otherwise); with ESS each direction has its own (MS-NLMP 3.4.4.2).
  Direction send_dir, recv_dir;
  Direction* send = &send_dir;
  Direction* recv = &recv_dir;
  std::string peer;

  // Server side: perfsim's acceptor (ntlm_server.h) and SPNEGO (spnego.h).
  std::shared_ptr<const AuthService> service;
  NtlmTarget target;
  Bytes negotiate, challenge;  // the NTLMSSP messages of this handshake, as sent
  bool spnego_begun = false;
  bool mech_named = false;    // our first NegTokenResp (which names NTLMSSP as supportedMech) went out
  Bytes mech_types;           // the client's MechTypeList, DER: what mechListMIC covers
  bool mic_required = false;  // NTLMSSP was not the client's first choice (RFC 4178 5)

  // Client side: gss-ntlmssp through MIT GSSAPI.
  gss_cred_id_t own_cred = GSS_C_NO_CREDENTIAL;
  gss_name_t target_name = GSS_C_NO_NAME;
  gss_ctx_id_t ctx = GSS_C_NO_CONTEXT;

  ~Impl() {
    OM_uint32 minor = 0;
    if (ctx != GSS_C_NO_CONTEXT) gss_delete_sec_context(&minor, &ctx, GSS_C_NO_BUFFER);
    if (own_cred != GSS_C_NO_CREDENTIAL) gss_release_cred(&minor, &own_cred);
    if (target_name != GSS_C_NO_NAME) gss_release_name(&minor, &target_name);
  }

  bool keys(const Key16& key) {
    recv = (flags & ntlmssp::kFlagEss) ? &recv_dir : &send_dir;
    return send->init(key, flags, !is_server) && recv->init(key, flags, is_server);
  }

  Status server_step(ByteView in, Bytes& out);
  Status ntlm_leg(ByteView message, Bytes& out, NtlmLogon* logon);
  Status spnego_leg(ByteView in, Bytes& out);
  Status client_finish();
};

// One raw NTLMSSP leg: NEGOTIATE -> CHALLENGE, then AUTHENTICATE -> verified (`logon` filled).
Status SecurityContext::Impl::ntlm_leg(ByteView m, Bytes& out, NtlmLogon* logon) {
  const uint32_t due = challenge.empty() ? ntlmssp::kNegotiate : ntlmssp::kAuthenticate;
  if (ntlmssp::message_type(m) != due)
    return Status::InvalidArgument("NTLMSSP message type " + std::to_string(ntlmssp::message_type(m)) + " where type " +
                                   std::to_string(due) + " was due");
  if (due == ntlmssp::kNegotiate) {
    if (Status s = ntlmssp::check_negotiate(m); !s.ok()) return s;
    negotiate.assign(m.begin(), m.end());
    if (Status s = build_challenge(m, target, ntlmssp::filetime_now(), challenge); !s.ok()) return s;
    out = challenge;
    return Status::Ok();
  }
  if (Status s =
          verify_authenticate(service->impl().accounts, negotiate, challenge, m, ntlmssp::filetime_now(), *logon);
      !s.ok())
    return s;
  flags = logon->flags;
  peer = logon->domain + "\\" + logon->user;
  return keys(logon->session_key) ? Status::Ok() : ntlm::crypto_status();
}

// SPNEGO (RFC 4178, MS-SPNG) offering NTLMSSP only: NegTokenInit -> NegTokenResp with the
// CHALLENGE (or, when NTLMSSP was not the client's first mechanism or came without a token, an
// empty answer selecting it and asking for a MIC), then the AUTHENTICATE with its mechListMIC ->
// accept-completed with ours. Both MICs are NTLM signatures over the MechTypeList at sequence 0;
// the RC4 state restarts after them, the sequence numbers do not (MS-SPNG 3.3.5.1).
Status SecurityContext::Impl::spnego_leg(ByteView in, Bytes& out) {
  std::optional<ByteView> token, mic;
  if (!spnego_begun) {
    spnego::NegTokenInit init;
    if (Status s = spnego::parse_init(in, init); !s.ok()) return s;
    const auto ntlm = std::ranges::find_if(
        init.mech_types, [](ByteView o) { return std::ranges::equal(o, ByteView(spnego::kNtlmsspOid)); });
    if (ntlm == init.mech_types.end()) return Status::InvalidArgument("SPNEGO: the client does not offer NTLMSSP");
    spnego_begun = true;
    mech_types.assign(init.mech_types_der.begin(), init.mech_types_der.end());
    mic_required = ntlm != init.mech_types.begin();
    if (!mic_required) token = init.mech_token;
    if (!token) {
      out = spnego::build_resp(mic_required ? spnego::kRequestMic : spnego::kAcceptIncomplete, true, {}, {});
      mech_named = true;
      return Status::Ok();
    }
  } else {
    spnego::NegTokenResp resp;
    if (Status s = spnego::parse_resp(in, resp); !s.ok()) return s;
    token = resp.response_token;
    mic = resp.mech_list_mic;
    if (!token) return Status::InvalidArgument("SPNEGO: a NegTokenResp without the NTLMSSP message due");
  }
  const bool first = challenge.empty();
  Bytes reply;
  NtlmLogon logon;
  if (Status s = ntlm_leg(*token, reply, &logon); !s.ok()) return s;
  if (first) {
    out = spnego::build_resp(spnego::kAcceptIncomplete, !std::exchange(mech_named, true), reply, {});
    return Status::Ok();
  }
  // The AUTHENTICATE verified: the mechListMIC exchange.
  if (!mic) {
    if (mic_required || logon.mic)
      return Status::InvalidArgument("SPNEGO: no mechListMIC, which MS-SPNG 3.3.5.1 requires here");
    out = spnego::build_resp(spnego::kAcceptCompleted, false, {}, {});
    return Status::Ok();
  }
  uint8_t want[16], ours[16];
  if (mic->size() != 16 || !recv->mac(mech_types, want) || !recv->matches(want, mic->data()))
    return Status::InvalidArgument("SPNEGO: the client's mechListMIC does not verify");
  if (!send->mac(mech_types, ours) || !send->reset() || !recv->reset()) return ntlm::crypto_status();
  out = spnego::build_resp(spnego::kAcceptCompleted, false, {}, ByteView(ours, 16));
  return Status::Ok();
}

Status SecurityContext::Impl::server_step(ByteView in, Bytes& out) {
  if (auth_type == kAuthTypeSpnego) {
    if (Status s = spnego_leg(in, out); !s.ok()) return s;
  } else {
    NtlmLogon logon;
    if (Status s = ntlm_leg(in, out, &logon); !s.ok()) return s;
  }
  done = !peer.empty();
  return Status::Ok();
}

Status SecurityContext::Impl::client_finish() {
  OM_uint32 minor = 0;
  gss_buffer_set_t set = GSS_C_NO_BUFFER_SET;
  OM_uint32 major = gss_inquire_sec_context_by_oid(&minor, ctx, GSS_C_INQ_SSPI_SESSION_KEY, &set);
  if (GSS_ERROR(major) || !set || set->count < 1 || set->elements[0].length != 16) {
    if (set) gss_release_buffer_set(&minor, &set);
    return Status::Unsupported(gss_error("reading the NTLM session key", major, minor));
  }
  Key16 key;
  memcpy(key.data(), set->elements[0].value, 16);
  gss_release_buffer_set(&minor, &set);
  if (!keys(key)) return ntlm::crypto_status();
  // A SPNEGO mechListMIC was an NTLM signature: it used sequence number 0 of its direction.
  // MS-SPNG 3.3.5.1 resets the RC4 state afterwards but not the sequence numbers (Samba's
  // ntlmssp_sign_reset(state, false); gss-ntlmssp's reset_crypto keeps them too).
  if (mic_in) recv->seq = 1;
  if (mic_out) send->seq = 1;
  done = true;
  return Status::Ok();
}

SecurityContext::SecurityContext(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SecurityContext::~SecurityContext() = default;

std::unique_ptr<SecurityContext> SecurityContext::server(std::shared_ptr<const AuthService> service, uint8_t auth_type,
                                                         const NtlmTarget& target) {
  auto impl = std::make_unique<Impl>();
  impl->service = std::move(service);
  impl->auth_type = auth_type;
  impl->target = target;
  return std::unique_ptr<SecurityContext>(new SecurityContext(std::move(impl)));
}

Status SecurityContext::client(const ClientIdentity& who, uint8_t auth_type, std::unique_ptr<SecurityContext>& out) {
  if (Status s = ntlm::crypto_status(); !s.ok()) return s;
  auto impl = std::make_unique<Impl>();
  impl->is_server = false;
  impl->auth_type = auth_type;
  OM_uint32 major, minor = 0;
  std::string uname = who.domain.empty() ? who.user : who.domain + "\\" + who.user;
  gss_buffer_desc ub{uname.size(), uname.data()};
  gss_name_t user = GSS_C_NO_NAME;
  major = gss_import_name(&minor, &ub, GSS_C_NT_USER_NAME, &user);
  if (GSS_ERROR(major)) return Status::InvalidArgument(gss_error("user name '" + uname + "'", major, minor));
  gss_buffer_desc pw{who.password.size(), const_cast<char*>(who.password.data())};
  gss_OID_desc mech_array[2] = {kNtlmsspOid, kSpnegoOid};
  gss_OID_set_desc mechs{auth_type == kAuthTypeSpnego ? 2u : 1u, mech_array};
  major = gss_acquire_cred_with_password(&minor, user, &pw, GSS_C_INDEFINITE, &mechs, GSS_C_INITIATE, &impl->own_cred,
                                         nullptr, nullptr);
  gss_release_name(&minor, &user);
  if (GSS_ERROR(major))
    return Status::Unsupported(gss_error("NTLM credentials for '" + uname + "'", major, minor) +
                               " (is gss-ntlmssp installed?)");
  if (auth_type == kAuthTypeSpnego) {
    gss_OID_set_desc only_ntlm{1, &kNtlmsspOid};
    gss_set_neg_mechs(&minor, impl->own_cred, &only_ntlm);
  }
  gss_buffer_desc tb{7, const_cast<char*>("perfsim")};
  major = gss_import_name(&minor, &tb, GSS_C_NT_HOSTBASED_SERVICE, &impl->target_name);
  if (GSS_ERROR(major)) return Status::Unsupported(gss_error("gss_import_name", major, minor));
  out.reset(new SecurityContext(std::move(impl)));
  return Status::Ok();
}

Status SecurityContext::step(ByteView in, Bytes& out) {
  Impl& m = *impl_;
  out.clear();
  if (m.done) return Status::InvalidArgument("authentication token after the security context was established");
  if (m.is_server) return m.server_step(in, out);
  // The CHALLENGE (or a later SPNEGO leg) a server answers with, checked before the libraries
  // parse it; an empty one made gss-ntlmssp's and MIT SPNEGO's initiators dereference NULL.
  if (m.ctx != GSS_C_NO_CONTEXT)
    if (Status s = check_server_token(m.auth_type, in); !s.ok()) return s;
  OM_uint32 major, minor = 0;
  gss_buffer_desc input{in.size(), const_cast<uint8_t*>(in.data())};
  gss_buffer_desc output = GSS_C_EMPTY_BUFFER;
  gss_OID mech = m.auth_type == kAuthTypeSpnego ? &kSpnegoOid : &kNtlmsspOid;
  major = gss_init_sec_context(&minor, m.own_cred, &m.ctx, m.target_name, mech,
                               GSS_C_INTEG_FLAG | GSS_C_CONF_FLAG | GSS_C_REPLAY_FLAG | GSS_C_SEQUENCE_FLAG, 0,
                               GSS_C_NO_CHANNEL_BINDINGS, in.empty() ? GSS_C_NO_BUFFER : &input, nullptr, &output,
                               nullptr, nullptr);
  if (output.length)
    out.assign(static_cast<const uint8_t*>(output.value), static_cast<const uint8_t*>(output.value) + output.length);
  gss_release_buffer(&minor, &output);
  if (GSS_ERROR(major)) return Status::InvalidArgument(gss_error("NTLMSSP authentication failed", major, minor));
  uint32_t f = 0;
  if (ntlm_flags(out, ntlmssp::kAuthenticate, f)) m.flags = f;
  // Remembered over legs: a client's MIC goes out one leg before its context completes.
  if (m.auth_type == kAuthTypeSpnego) {
    m.mic_in = m.mic_in || has_mech_list_mic(in);
    m.mic_out = m.mic_out || has_mech_list_mic(out);
  }
  if (major & GSS_S_CONTINUE_NEEDED) return Status::Ok();
  return m.client_finish();
}

bool SecurityContext::established() const { return impl_->done; }
uint8_t SecurityContext::auth_type() const { return impl_->auth_type; }
std::string SecurityContext::peer_name() const { return impl_->peer; }

// MS-NLMP 3.4.3: the message is sealed first, then signed with the same RC4 stream, the checksum
// taken over the plaintext. DCE/RPC signs the whole PDU up to the auth_value with ESS, the stub
// (with its padding) alone without (MS-RPCE 3.3.1.5.2; impacket's rpcrt.py, Samba's dcerpc_util.c).
Status SecurityContext::protect(std::span<uint8_t> pdu, size_t stub_offset, size_t stub_size, bool seal) {
  Impl& m = *impl_;
  if (!m.done || pdu.size() < kNtlmSignatureSize || stub_offset + stub_size > pdu.size() - kNtlmSignatureSize)
    return Status::InvalidArgument("no established security context, or a PDU without room for its signature");
  uint8_t* sig = pdu.data() + pdu.size() - kNtlmSignatureSize;
  uint8_t* stub = pdu.data() + stub_offset;
  const ByteView signed_part = m.send->ess ? ByteView(pdu.data(), sig) : ByteView(stub, stub_size);
  Bytes plain;  // sealing: the checksum is over the plaintext
  if (seal) {
    plain.assign(signed_part.begin(), signed_part.end());
    if (!m.send->seal(stub, stub_size)) return ntlm::crypto_status();
  }
  return m.send->mac(seal ? ByteView(plain) : signed_part, sig) ? Status::Ok() : ntlm::crypto_status();
}

Status SecurityContext::unprotect(std::span<uint8_t> pdu, size_t stub_offset, size_t stub_size, bool sealed) {
  Impl& m = *impl_;
  if (!m.done || pdu.size() < kNtlmSignatureSize || stub_offset + stub_size > pdu.size() - kNtlmSignatureSize)
    return Status::InvalidArgument("no established security context, or a PDU without room for its signature");
  uint8_t* sig = pdu.data() + pdu.size() - kNtlmSignatureSize;
  uint8_t* stub = pdu.data() + stub_offset;
  if (sealed && !m.recv->seal(stub, stub_size)) return ntlm::crypto_status();
  const ByteView signed_part =
      m.recv->ess ? ByteView(pdu.data(), pdu.size() - kNtlmSignatureSize) : ByteView(stub, stub_size);
  uint8_t want[16];
  if (!m.recv->mac(signed_part, want)) return ntlm::crypto_status();
  if (!m.recv->matches(want, sig))
    return Status::Corruption("the PDU's NTLMSSP signature does not verify (wrong key, altered or replayed PDU)");
  return Status::Ok();
}

}  // namespace perfsim::rpc
