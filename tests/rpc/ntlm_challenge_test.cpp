// rpc/ntlm_challenge.h: the CHALLENGE a client takes from a server, checked before gss-ntlmssp
// parses it. A CHALLENGE laid out as Windows sends it passes; each planted defect is refused with
// the field and offset named.
#include <catch2/catch.hpp>
#include <string>

#include "rpc/ntlm_challenge.h"
#include "tests/common/nlmp_examples.h"

using namespace perfsim;
using perfsim::rpc::check_ntlm_challenge;

namespace {

constexpr uint32_t kWindowsFlags = 0xe2898235;  // Unicode, target type domain, target info, version, ...

Bytes utf16(const std::string& s) {
  Bytes b;
  for (char c : s) {
    b.push_back(uint8_t(c));
    b.push_back(0);
  }
  return b;
}

void av(Bytes& info, uint16_t id, const Bytes& value) {
  put_le16(info, id);
  put_le16(info, uint16_t(value.size()));
  info.insert(info.end(), value.begin(), value.end());
}

// The AV pairs of a standalone Windows host named VM in workgroup PERFSIM, ended by MsvAvEOL.
Bytes windows_target_info() {
  Bytes info;
  av(info, 2, utf16("PERFSIM"));
  av(info, 1, utf16("VM"));
  av(info, 4, utf16("perfsim"));
  av(info, 3, utf16("vm"));
  av(info, 7, Bytes{0x50, 0x33, 0x2e, 0x8b, 0x7f, 0x7d, 0xdd, 0x01});
  av(info, 0, {});
  return info;
}

// A CHALLENGE_MESSAGE as Windows lays it out: fixed part, Version, TargetName, TargetInfo.
Bytes challenge(const Bytes& name, const Bytes& info, uint32_t flags = kWindowsFlags) {
  Bytes m = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0, 2, 0, 0, 0};
  m.resize(56);
  store_le16(&m[12], uint16_t(name.size()));
  store_le16(&m[14], uint16_t(name.size()));
  store_le32(&m[16], 56);
  store_le32(&m[20], flags);
  for (size_t i = 24; i < 32; ++i) m[i] = uint8_t(i);  // ServerChallenge
  store_le16(&m[40], uint16_t(info.size()));
  store_le16(&m[42], uint16_t(info.size()));
  store_le32(&m[44], uint32_t(56 + name.size()));
  m[48] = 10;  // Version 10.0
  m.insert(m.end(), name.begin(), name.end());
  m.insert(m.end(), info.begin(), info.end());
  return m;
}

Bytes windows_challenge() { return challenge(utf16("PERFSIM"), windows_target_info()); }

std::string refusal(const Bytes& m) {
  const Status s = check_ntlm_challenge(m);
  return s.ok() ? "accepted" : s.message();
}

}  // namespace

TEST_CASE("ntlm_challenge: a CHALLENGE as Windows sends it passes", "[rpc][ntlm_challenge]") {
  const Status s = check_ntlm_challenge(windows_challenge());
  INFO(s.ToString());
  CHECK(s.ok());
  // Without target info (NTLMSSP_NEGOTIATE_TARGET_INFO clear, as an NTLMv1-era server sends it).
  CHECK(check_ntlm_challenge(challenge(utf16("PERFSIM"), {}, kWindowsFlags & ~0x00800000u)).ok());
}

TEST_CASE("ntlm_challenge: an empty TargetName under a target type is refused (gss-ntlmssp dereferences NULL)",
          "[rpc][ntlm_challenge]") {
  CHECK(refusal(challenge({}, windows_target_info())).find("target type is set but TargetName is empty") !=
        std::string::npos);
  // Without a target type no name is read: an empty one is fine.
  CHECK(check_ntlm_challenge(challenge({}, windows_target_info(), kWindowsFlags & ~0x00030000u)).ok());
}

TEST_CASE("ntlm_challenge: the fixed part, signature and Version are checked", "[rpc][ntlm_challenge]") {
  const Bytes good = windows_challenge();
  CHECK(refusal(Bytes(good.begin(), good.begin() + 40)).find("shorter than the 48 bytes") != std::string::npos);
  Bytes other = good;
  other[8] = 3;  // an AUTHENTICATE_MESSAGE's type
  CHECK(refusal(other).find("not an NTLMSSP CHALLENGE_MESSAGE") != std::string::npos);
  // Each byte of the "NTLMSSP\0" signature is checked, not only the type (issue 49).
  for (size_t i = 0; i < 8; ++i) {
    INFO("signature byte " << i);
    Bytes sig = good;
    sig[i] ^= 0x20;
    CHECK(refusal(sig).find("not an NTLMSSP CHALLENGE_MESSAGE") != std::string::npos);
  }
  const Bytes no_version(good.begin(), good.begin() + 52);
  CHECK(refusal(no_version).find("no Version field") != std::string::npos);
}

TEST_CASE("ntlm_challenge: TargetNameFields and TargetInfoFields must lie inside the payload",
          "[rpc][ntlm_challenge]") {
  Bytes m = windows_challenge();
  store_le32(&m[16], 40);  // TargetName inside the fixed part
  CHECK(refusal(m).find("at offset 12: TargetName at 40") != std::string::npos);
  m = windows_challenge();
  store_le16(&m[40], uint16_t(m.size()));  // TargetInfo runs past the message
  CHECK(refusal(m).find("at offset 40: TargetInfo at") != std::string::npos);
  m = windows_challenge();
  store_le32(&m[44], 0xfffffff0u);  // an offset far outside (no wrap-around)
  CHECK(refusal(m).find("lies outside the payload") != std::string::npos);
  m = challenge(Bytes{'P', 0, 'E'}, windows_target_info());
  CHECK(refusal(m).find("Unicode TargetName of odd length") != std::string::npos);
}

TEST_CASE("ntlm_challenge: sizes are bounded", "[rpc][ntlm_challenge]") {
  Bytes info;
  av(info, 5, Bytes(rpc::kMaxChallengeTargetInfo, 'a'));
  av(info, 0, {});
  CHECK(refusal(challenge(utf16("PERFSIM"), info)).find("TargetInfo of 16392 bytes, above 16384") != std::string::npos);
  CHECK(refusal(challenge(Bytes(rpc::kMaxChallengeTargetName + 2, 'a'), windows_target_info()))
            .find("TargetName of 1026 bytes, above 1024") != std::string::npos);
}

TEST_CASE("ntlm_challenge: the AV pair list must be well formed and end with MsvAvEOL", "[rpc][ntlm_challenge]") {
  Bytes info = windows_target_info();
  info.resize(info.size() - 4);  // no MsvAvEOL
  CHECK(refusal(challenge(utf16("PERFSIM"), info)).find("ends without MsvAvEOL") != std::string::npos);

  info = windows_target_info();
  store_le16(&info[2], 200);  // the first pair claims more than the list holds
  CHECK(refusal(challenge(utf16("PERFSIM"), info)).find("AV pair 2 of 200 bytes runs past") != std::string::npos);

  info.clear();
  av(info, 7, Bytes(4, 1));  // a 4-byte timestamp: gss-ntlmssp would read 8
  av(info, 0, {});
  CHECK(refusal(challenge(utf16("PERFSIM"), info)).find("AV pair 7 has 4 bytes, wants 8") != std::string::npos);

  info.clear();
  av(info, 6, Bytes(2, 1));  // MsvAvFlags of 2 bytes: gss-ntlmssp would read 4
  av(info, 0, {});
  CHECK(refusal(challenge(utf16("PERFSIM"), info)).find("AV pair 6 has 2 bytes, wants 4") != std::string::npos);

  info.clear();
  av(info, 8, Bytes(20, 1));  // MsvAvSingleHost shorter than Single_Host_Data
  av(info, 0, {});
  CHECK(refusal(challenge(utf16("PERFSIM"), info)).find("wants at least 48") != std::string::npos);

  info.clear();
  av(info, 1, Bytes{'V', 0, 'M'});  // a name of odd length
  av(info, 0, {});
  CHECK(refusal(challenge(utf16("PERFSIM"), info)).find("AV pair 1 (a name) has an odd length") != std::string::npos);

  info.clear();
  av(info, 0, Bytes{1, 2});  // MsvAvEOL with a value
  CHECK(refusal(challenge(utf16("PERFSIM"), info)).find("MsvAvEOL carries a value") != std::string::npos);

  info.clear();
  av(info, 0x7777, Bytes(5, 1));  // an AvId MS-NLMP does not know: ignored, as the spec says
  av(info, 0, {});
  CHECK(check_ntlm_challenge(challenge(utf16("PERFSIM"), info)).ok());
}

TEST_CASE("ntlm_challenge: the Version a server announces is read only where it is given", "[rpc][ntlm_challenge]") {
  using rpc::NtlmVersion;
  const Bytes spec = test::nlmp_v2_challenge();
  REQUIRE(check_ntlm_challenge(spec).ok());
  CHECK(rpc::ntlm_challenge_version(spec) == NtlmVersion{6, 0, 6000});
  // Inside a SPNEGO NegTokenResp (negState accept-incomplete, responseToken; RFC 4178 4.2.2), as SMB2 SESSION_SETUP and RPC_C_AUTHN_GSS_NEGOTIATE carry it.
  Bytes wrapped = {0xa1, 0x73, 0x30, 0x71, 0xa0, 0x03, 0x0a, 0x01, 0x01, 0xa2, 0x6a, 0x04, 0x68};
  wrapped.insert(wrapped.end(), spec.begin(), spec.end());
  CHECK(rpc::find_ntlm_challenge_version(wrapped) == NtlmVersion{6, 0, 6000});
  CHECK(rpc::find_ntlm_challenge_version(ByteView(wrapped).first(13)) == std::nullopt);
  // A Windows 10 build through the builder above.
  Bytes w10 = windows_challenge();
  store_le16(&w10[50], 14393);
  CHECK(rpc::ntlm_challenge_version(w10) == NtlmVersion{10, 0, 14393});
  // Without NTLMSSP_NEGOTIATE_VERSION the 8 bytes are not a version.
  Bytes unflagged = spec;
  store_le32(&unflagged[20], load_le32(&unflagged[20]) & ~0x02000000u);
  CHECK(rpc::ntlm_challenge_version(unflagged) == std::nullopt);
  // Samba's smbd says 6.1 build 0: no Windows build.
  Bytes samba = spec;
  store_le16(&samba[50], 0);
  samba[49] = 1;
  CHECK(rpc::ntlm_challenge_version(samba) == std::nullopt);
  // A message the check refuses gives none either (TargetInfo past the end).
  Bytes cut = spec;
  cut.resize(cut.size() - 8);
  CHECK(rpc::ntlm_challenge_version(cut) == std::nullopt);
}
