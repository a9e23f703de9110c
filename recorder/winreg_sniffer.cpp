#include "recorder/winreg_sniffer.h"

#include <algorithm>

#include "core/utf16.h"
#include "rpc/frame.h"
#include "rpc/pdu.h"
#include "windows/constants.h"

namespace perfsim::recorder {
namespace {

constexpr size_t kMaxFrag = 0xffff;               // frag_length is 16 bits
constexpr size_t kMaxStub = 0x4000000 + 0x10000;  // 64 MiB of value data plus the NDR around it
constexpr uint8_t kAuthLevelPrivacy = 6;          // RPC_C_AUTHN_LEVEL_PKT_PRIVACY: stubs are sealed

// The sec_trailer's auth_level, or 0 when the PDU carries no authentication.
uint8_t auth_level(ByteView pdu, const rpc::Header& h) {
  if (h.auth_length == 0 || pdu.size() < size_t(h.auth_length) + 8 + rpc::kHeaderSize) return 0;
  return pdu[pdu.size() - h.auth_length - 8 + 1];
}

std::array<uint8_t, 20> handle_key(const winreg::PolicyHandle& h) {
  std::array<uint8_t, 20> k{};
  store_le32(k.data(), h.attributes);
  std::copy(h.uuid.begin(), h.uuid.end(), k.begin() + 4);
  return k;
}

std::string text(const winreg::String& s) { return s ? utf16_to_utf8(*s) : std::string(); }

const char* hive_key(uint16_t opnum) {
  switch (opnum) {
    case winreg::kOpenHKPD:
      return "HKPD";
    case winreg::kOpenHKPT:
      return "HKPT";
    case winreg::kOpenHKPN:
      return "HKPN";
    case winreg::kOpenHKLM:
      return "";
    default:
      return nullptr;
  }
}

}  // namespace

void WinregSniffer::problem(const std::string& what) { problems_.push_back(label_ + ": " + what); }

void WinregSniffer::from_client(ByteView data, int64_t time) { feed(client_, true, data, time); }
void WinregSniffer::from_server(ByteView data, int64_t time) { feed(server_, false, data, time); }

void WinregSniffer::feed(Direction& d, bool client, ByteView data, int64_t time) {
  if (d.dead || state_ == State::kIgnored || state_ == State::kSealed) return;
  if (!client && state_ == State::kStart) return;  // the server never speaks first in DCE/RPC
  d.buffer.insert(d.buffer.end(), data.begin(), data.end());
  size_t used = 0;
  while (!d.dead && (state_ == State::kStart || state_ == State::kWinreg)) {
    size_t length = 0;
    const ByteView rest = ByteView(d.buffer).subspan(used);
    if (Status s = rpc::next_pdu_length(rest, kMaxFrag, length); !s.ok()) {
      if (state_ == State::kWinreg)
        problem(std::string(client ? "client" : "server") + " stream is not DCE/RPC after " + "a winreg bind (" +
                s.message() + "); the rest is not decoded");
      else
        state_ = State::kIgnored;
      d.dead = true;
      break;
    }
    if (length == 0 || rest.size() < length) break;
    const ByteView pdu = rest.first(length);
    used += length;
    if (client)
      client_pdu(pdu, time);
    else
      server_pdu(pdu, time);
  }
  d.buffer.erase(d.buffer.begin(), d.buffer.begin() + std::ptrdiff_t(std::min(used, d.buffer.size())));
  if (d.dead || (state_ != State::kWinreg && state_ != State::kStart)) Bytes().swap(d.buffer);
}

void WinregSniffer::client_pdu(ByteView pdu, int64_t time) {
  rpc::Header h;
  if (!rpc::parse_header(pdu, h).ok()) {
    if (state_ == State::kStart) state_ = State::kIgnored;
    return;
  }
  if (state_ == State::kStart && (h.ptype != rpc::PType::kBind || h.rpc_vers_minor != 0)) {
    state_ = State::kIgnored;
    return;
  }
  if (h.ptype == rpc::PType::kBind || h.ptype == rpc::PType::kAlterContext) {
    rpc::Bind b;
    if (!rpc::parse_bind(pdu, h, b).ok()) {
      if (state_ == State::kStart) state_ = State::kIgnored;
      return;
    }
    for (const rpc::ContextElem& c : b.contexts)
      if (c.abstract_syntax == rpc::winreg_syntax()) winreg_contexts_.push_back(c.context_id);
    if (state_ == State::kStart) state_ = winreg_contexts_.empty() ? State::kIgnored : State::kWinreg;
  }
  if (state_ == State::kWinreg && auth_level(pdu, h) >= kAuthLevelPrivacy) {
    problem("DCE/RPC with packet privacy (sealed stubs): cannot be read");
    state_ = State::kSealed;
    return;
  }
  if (h.ptype != rpc::PType::kRequest) return;
  rpc::Request r;
  if (!rpc::parse_request(pdu, h, r).ok() ||
      std::find(winreg_contexts_.begin(), winreg_contexts_.end(), r.context_id) == winreg_contexts_.end())
    return;
  Call& c = calls_[h.call_id];
  if (h.pfc_flags & rpc::kPfcFirstFrag) c = Call{};
  c.opnum = r.opnum;
  if (c.stub.size() + r.stub.size() > kMaxStub) {
    problem("request call_id " + std::to_string(h.call_id) + " exceeds 64 MiB; dropped");
    calls_.erase(h.call_id);
    return;
  }
  c.stub.insert(c.stub.end(), r.stub.begin(), r.stub.end());
  if (h.pfc_flags & rpc::kPfcLastFrag) {
    c.complete = true;
    c.sent = time;
  }
}

void WinregSniffer::server_pdu(ByteView pdu, int64_t time) {
  rpc::Header h;
  if (!rpc::parse_header(pdu, h).ok()) return;
  if ((h.ptype == rpc::PType::kBindAck || h.ptype == rpc::PType::kAlterContextResp) && h.auth_length && !announced_ &&
      pdu.size() >= rpc::kHeaderSize + h.auth_length) {
    // The auth_value closes the PDU (C706 12.6.3): the server's CHALLENGE where NTLMSSP is bound.
    announced_ = rpc::find_ntlm_challenge_version(pdu.last(h.auth_length));
    return;
  }
  if (h.ptype == rpc::PType::kFault) {
    calls_.erase(h.call_id);
    responses_.erase(h.call_id);
    return;
  }
  if (h.ptype != rpc::PType::kResponse) return;
  rpc::Response r;
  auto call = calls_.find(h.call_id);
  if (call == calls_.end() || !call->second.complete || !rpc::parse_response(pdu, h, r).ok()) return;
  Bytes& stub = responses_[h.call_id];
  if (h.pfc_flags & rpc::kPfcFirstFrag) stub.clear();
  if (stub.size() + r.stub.size() > kMaxStub) {
    problem("response call_id " + std::to_string(h.call_id) + " exceeds 64 MiB; dropped");
    responses_.erase(h.call_id);
    calls_.erase(call);
    return;
  }
  stub.insert(stub.end(), r.stub.begin(), r.stub.end());
  if (!(h.pfc_flags & rpc::kPfcLastFrag)) return;
  const Bytes whole = std::move(stub);
  responses_.erase(h.call_id);
  const Call c = std::move(call->second);
  calls_.erase(call);
  answered(c, whole, time);
}

void WinregSniffer::answered(const Call& call, ByteView stub, int64_t time) {
  auto undecodable = [&](const char* what, const Status& s) {
    problem(std::string(winreg::opnum_name(call.opnum)) + " " + what + " does not decode: " + s.message());
  };
  if (const char* hive = hive_key(call.opnum)) {
    winreg::OpenHiveResponse resp;
    if (Status s = winreg::decode(stub, resp); !s.ok()) return undecodable("response", s);
    if (resp.result == windows::kErrorSuccess) handles_[handle_key(resp.handle)] = hive;
    return;
  }
  switch (call.opnum) {
    case winreg::kOpenKey: {
      winreg::OpenKeyRequest req;
      winreg::OpenKeyResponse resp;
      if (Status s = winreg::decode(call.stub, req); !s.ok()) return undecodable("request", s);
      if (Status s = winreg::decode(stub, resp); !s.ok()) return undecodable("response", s);
      auto parent = handles_.find(handle_key(req.parent_handle));
      if (resp.result != windows::kErrorSuccess || parent == handles_.end()) return;
      const std::string name = text(req.keyname);
      handles_[handle_key(resp.handle)] = parent->second.empty() ? name
                                          : name.empty()         ? parent->second
                                                                 : parent->second + "\\" + name;
      return;
    }
    case winreg::kCloseKey: {
      winreg::CloseKeyRequest req;
      winreg::CloseKeyResponse resp;
      if (Status s = winreg::decode(call.stub, req); !s.ok()) return undecodable("request", s);
      if (Status s = winreg::decode(stub, resp); !s.ok()) return undecodable("response", s);
      if (resp.result == windows::kErrorSuccess) handles_.erase(handle_key(req.handle));
      return;
    }
    case winreg::kQueryValue:
      return on_query_value(call, stub, time);
    default:
      return;  // other calls do not change what QueryValue answers
  }
}

void WinregSniffer::on_query_value(const Call& call, ByteView stub, int64_t time) {
  winreg::QueryValueRequest req;
  winreg::QueryValueResponse resp;
  if (Status s = winreg::decode(call.stub, req); !s.ok())
    return problem("QueryValue request does not decode: " + s.message());
  if (Status s = winreg::decode(stub, resp); !s.ok())
    return problem("QueryValue response does not decode: " + s.message());
  auto key = handles_.find(handle_key(req.handle));
  if (key == handles_.end()) {
    ++unknown_handle_queries_;
    return;
  }
  Exchange e;
  e.time_100ns = time;
  e.latency_us = uint32_t(std::clamp<int64_t>((time - call.sent) / 10, 0, UINT32_MAX));
  e.key = key->second;
  e.value_name = text(req.value_name);
  e.null_data = !req.data.has_value();
  e.offered = req.data_size.value_or(0);
  e.status = resp.result;
  e.type = resp.type.value_or(0);
  e.size = resp.data_size.value_or(0);
  if (resp.data) e.data = std::move(*resp.data).to_bytes();
  exchanges_.push_back(std::move(e));
}

void WinregSniffer::finish() {
  if (unknown_handle_queries_)
    problem(std::to_string(unknown_handle_queries_) +
            " QueryValue call(s) on handles opened before the capture began (key unknown): skipped");
  size_t unanswered = 0;
  for (const auto& [id, c] : calls_) unanswered += c.complete && c.opnum == winreg::kQueryValue;
  if (unanswered) problem(std::to_string(unanswered) + " QueryValue call(s) without a complete answer in the capture");
}

}  // namespace perfsim::recorder
