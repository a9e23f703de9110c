#include "rpc/ntlm_challenge.h"

#include <algorithm>
#include <string>

#include "rpc/ntlmssp.h"

namespace perfsim::rpc {
namespace {

// NegotiateFlags (MS-NLMP 2.2.2.5) the layout depends on: rpc/ntlmssp.h's.
using ntlmssp::kFlagTargetInfo;
using ntlmssp::kFlagTargetTypeDomain;
using ntlmssp::kFlagTargetTypeServer;
using ntlmssp::kFlagUnicode;
using ntlmssp::kFlagVersion;

constexpr size_t kFixedPart = 48;  // up to TargetInfoFields; Version (8 bytes) follows when flagged

// AvIds (MS-NLMP 2.2.2.1): rpc/ntlmssp.h's.
using ntlmssp::kAvChannelBindings;
using ntlmssp::kAvDnsTreeName;
using ntlmssp::kAvEol;
using ntlmssp::kAvFlags;
using ntlmssp::kAvNbComputerName;
using ntlmssp::kAvSingleHost;
using ntlmssp::kAvTargetName;
using ntlmssp::kAvTimestamp;

Status bad(size_t at, const std::string& what) {
  return Status::Corruption("NTLMSSP CHALLENGE: at offset " + std::to_string(at) + ": " + what);
}

// A (Len, MaxLen, Offset) field at `at`: its bytes inside the message, after the fixed part.
Status field(ByteView msg, size_t at, size_t payload, size_t limit, const char* name, ByteView& out) {
  const size_t len = load_le16(&msg[at]), off = load_le32(&msg[at + 4]);
  out = {};
  if (len == 0) return Status::Ok();
  if (len > limit)
    return bad(at, std::string(name) + " of " + std::to_string(len) + " bytes, above " + std::to_string(limit));
  if (off < payload || off > msg.size() || len > msg.size() - off)
    return bad(at, std::string(name) + " at " + std::to_string(off) + " (" + std::to_string(len) +
                       " bytes) lies outside the payload [" + std::to_string(payload) + ", " +
                       std::to_string(msg.size()) + ")");
  out = msg.subspan(off, len);
  return Status::Ok();
}

// One AV pair's value: the fixed-size pairs at their size, names of whole UTF-16 units.
Status av_value(uint16_t id, size_t len, size_t at) {
  const auto sized = [&](size_t want, bool at_least) {
    if (at_least ? len >= want : len == want) return Status::Ok();
    return bad(at, "AV pair " + std::to_string(id) + " has " + std::to_string(len) + " bytes, wants " +
                       (at_least ? "at least " : "") + std::to_string(want));
  };
  switch (id) {
    case kAvFlags:
      return sized(4, false);
    case kAvTimestamp:
      return sized(8, false);
    case kAvSingleHost:
      return sized(48, true);  // Single_Host_Data (2.2.2.2): Size, Z4, CustomData, MachineID
    case kAvChannelBindings:
      return sized(16, false);
    default:
      break;
  }
  const bool name = (id >= kAvNbComputerName && id <= kAvDnsTreeName) || id == kAvTargetName;
  if (name && len % 2) return bad(at, "AV pair " + std::to_string(id) + " (a name) has an odd length");
  return Status::Ok();
}

// The AV pair list of TargetInfo, `base` its offset in the message: pairs inside, ended by MsvAvEOL.
Status av_pairs(ByteView info, size_t base) {
  size_t at = 0;
  for (;;) {
    if (info.size() - at < 4) return bad(base + at, "the AV pair list ends without MsvAvEOL");
    const uint16_t id = load_le16(&info[at]);
    const size_t len = load_le16(&info[at + 2]);
    if (len > info.size() - at - 4)
      return bad(base + at,
                 "AV pair " + std::to_string(id) + " of " + std::to_string(len) + " bytes runs past the target info");
    if (id == kAvEol) return len == 0 ? Status::Ok() : bad(base + at, "MsvAvEOL carries a value");
    if (Status s = av_value(id, len, base + at); !s.ok()) return s;
    at += 4 + len;
  }
}

}  // namespace

Status check_ntlm_challenge(ByteView msg) {
  static const uint8_t sig[12] = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0, 2, 0, 0, 0};
  if (msg.size() < kFixedPart) return bad(msg.size(), "shorter than the 48 bytes of a CHALLENGE_MESSAGE");
  if (!std::equal(sig, sig + 12, msg.begin())) return bad(0, "not an NTLMSSP CHALLENGE_MESSAGE (signature, type 2)");
  const uint32_t flags = load_le32(&msg[20]);
  const size_t payload = kFixedPart + (flags & kFlagVersion ? 8 : 0);
  if (msg.size() < payload) return bad(msg.size(), "NTLMSSP_NEGOTIATE_VERSION set but no Version field");
  ByteView name, info;
  if (Status s = field(msg, 12, payload, kMaxChallengeTargetName, "TargetName", name); !s.ok()) return s;
  if (name.empty() && (flags & (kFlagTargetTypeDomain | kFlagTargetTypeServer)))
    return bad(12, "a target type is set but TargetName is empty");
  if ((flags & kFlagUnicode) && name.size() % 2) return bad(12, "a Unicode TargetName of odd length");
  if (Status s = field(msg, 40, payload, kMaxChallengeTargetInfo, "TargetInfo", info); !s.ok()) return s;
  if (!(flags & kFlagTargetInfo)) return Status::Ok();
  return av_pairs(info, load_le32(&msg[44]));
}

std::optional<NtlmVersion> ntlm_challenge_version(ByteView msg) {
  if (!check_ntlm_challenge(msg).ok() || !(load_le32(&msg[20]) & kFlagVersion)) return std::nullopt;
  const NtlmVersion v{msg[kFixedPart], msg[kFixedPart + 1], load_le16(&msg[kFixedPart + 2])};
  if (v.build == 0) return std::nullopt;
  return v;
}

std::optional<NtlmVersion> find_ntlm_challenge_version(ByteView blob) {
  static const uint8_t sig[12] = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0, 2, 0, 0, 0};
  const auto at = std::search(blob.begin(), blob.end(), sig, sig + 12);
  if (at == blob.end()) return std::nullopt;
  return ntlm_challenge_version(blob.subspan(size_t(at - blob.begin())));
}

}  // namespace perfsim::rpc
