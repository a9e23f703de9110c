// What fuzz_client's session mode runs against the server's bytes, shared with fuzz_seeds, which
// runs the same calls against perfsim's own server to record the seeds' server side: a seed
// replays only if the client makes the calls it answers, in the same order.
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <optional>
#include <string>

#include "fuzz/fuzz_input.h"
#include "perfdata/model.h"
#include "perfdata/names.h"
#include "recorder/client.h"
#include "recorder/record.h"
#include "recorder/rpc_channel.h"
#include "winreg/codec.h"

namespace perfsim::fuzz {

inline const rpc::ClientIdentity kWho{"FUZZ", "fuzz", "Fuzz-Pass-1"};

// 0-1: no authentication; 2-4: NTLMSSP at connect, sign, seal; 5-7: SPNEGO at the same.
inline std::optional<recorder::TcpAuth> auth_of(uint8_t selector) {
  const uint8_t n = selector % 8;
  if (n < 2) return std::nullopt;
  static const uint8_t levels[] = {rpc::kAuthLevelConnect, rpc::kAuthLevelIntegrity, rpc::kAuthLevelPrivacy};
  return recorder::TcpAuth{kWho, n < 5 ? rpc::kAuthTypeNtlmssp : rpc::kAuthTypeSpnego, levels[(n - 2) % 3]};
}

// perfsim query's calls (OpenHKPD, Counter 009 and an object with a growing buffer, decoded),
// then the HKLM ones record makes first (Perflib and its subkeys).
inline void collector(recorder::WinregClient& c) {
  winreg::PolicyHandle hkpd;
  if (!c.open_hive(winreg::kOpenHKPD, hkpd).ok()) return;
  recorder::Growth g;
  g.initial = 1024;
  g.max_tries = 4;
  recorder::ValueResult v;
  perfdata::NameTable names;
  if (c.query_value_growing(hkpd, "Counter 009", g, v).ok() && v.status == 0)
    (void)perfdata::parse_names(v.data, names);
  perfdata::DataBlock block;
  if (c.query_value_growing(hkpd, "238", g, v).ok() && v.status == 0) (void)perfdata::parse(v.data, block);
  winreg::PolicyHandle hklm, perflib;
  uint32_t werr = 0;
  if (!c.open_hive(winreg::kOpenHKLM, hklm).ok()) return;
  if (!c.open_key(hklm, "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib", perflib, werr).ok()) return;
  std::string name;
  for (uint32_t i = 0; i < 4 && c.enum_key(perflib, i, name, werr).ok() && werr == 0; ++i) {}
  (void)c.close_key(perflib, werr);
}

// `perfsim record` of one sample of "238" with the 009 name tables, into a capture in memory.
inline void record_one(recorder::WinregClient& c) {
  const int fd = memfd_create("fuzz-client", 0);
  require(fd >= 0);
  recorder::RecordOptions o;
  o.queries = {"238"};
  o.languages = {"009"};
  o.interval = std::chrono::milliseconds(0);
  o.count = 1;
  o.host_name = "fuzz";
  recorder::RecordResult r;
  (void)recorder::record(c, "/proc/self/fd/" + std::to_string(fd), o, r);
  close(fd);
}

}  // namespace perfsim::fuzz
