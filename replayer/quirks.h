// A host's quirks: how a simulated host misbehaves like a real one (shared/docs/quirks.md). What
// each quirk is, its parameters and behaviour are rows of quirk_table.h; the call path runs them
// in quirk_engine.h.
//
// Each quirk is switched on or off alone and has parameters. Sources, applied in order by the
// caller (later wins, quirk by quirk; `perfsim serve` uses this order): the defaults (rrp-exact,
// extra-objects, costly), the capture's recorded fingerprint (`fingerprint_quirks`), a named OS
// profile (`profile_quirks`), explicit settings (`apply_setting`). The buffer policies are one choice: enabling one replaces the previous.
// Content quirks (duplicate-counter-defs, duplicate-instances, name-table-gaps,
// counter-type-change, perffreq, localized-partial) rewrite the host's copy of the capture
// (content_quirks.h); captures that already hold such content (synth profiles) serve it as is.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "captures/fingerprint.h"
#include "core/status.h"
#include "replayer/content_quirks.h"

namespace perfsim::replayer {

enum class BufferPolicy { kRrpExact, kWin32Undefined, kWin2000Echo, kNt4Unsettled, kSambaTruncate, kEchoOffered };

// A chance that fires with `probability`, and/or on every `every`-th eligible call.
struct Chance {
  double probability = 0;
  uint32_t every = 0;
  bool active() const { return probability > 0 || every > 0; }
};

struct Quirks {
  BufferPolicy buffer = BufferPolicy::kRrpExact;
  uint32_t win2000_overhead = 65536;             // win2000-echo-oversize: bytes beyond Global the buffer needs
  uint32_t nt4_jitter = 16384;                   // nt4-unsettled: the needed size wanders by up to this
  uint32_t growth_bytes = 0;                     // growth-between-calls: data grows by this after a size answer
  Chance busy;                                   // busy: ERROR_BUSY on QueryValue
  Chance transient;                              // transient-error: another error .NET retries
  uint32_t transient_code = 21;                  // ERROR_NOT_READY
  uint32_t slow_global_ms = 0;                   // slow-global: added latency of Global/Costly
  std::vector<std::string> timed_out_providers;  // provider-timeout: their objects vanish
  Chance hang;                                   // hang: the call blocks for hang_ms
  uint32_t hang_ms = 120000;
  Chance empty_names;                     // empty-names-under-stress: Counter/Help come back empty
  bool pipe_not_available_first = false;  // SMB transport only
  bool access_denied_open = false;        // access-denied (on = open): OpenHKPD refused
  bool access_denied_query = false;       // access-denied (on = query): QueryValue on HKPD refused
  bool extra_objects = true;              // a query returns every object of the asked objects' providers
  bool costly = true;                     // costly objects only with Costly or explicit indices
  uint32_t object_count_extra = 0;        // object-count-lies: NumObjectTypes says this many more
  bool process_v1_disabled = false;       // the PerfProc provider's objects vanish
  bool restrict_remote_clients = false;   // ncacn_ip_tcp only: unauthenticated calls fault access denied
  bool smb1_disabled = false;             // SMB only: NT1 refused where the OS spoke it (server/smb_serve.cpp)
  ContentQuirks content;                  // rewrites of the served content
};

// One explicit setting: `name` (a quirks.md quirk), on/off, parameters as text.
struct QuirkSetting {
  std::string name;
  bool on = true;
  std::map<std::string, std::string> params;
};

// Applies one setting through its quirk_table.h row. InvalidArgument names an unknown quirk (and
// the known ones) or parameter, or a bad value.
Status apply_setting(Quirks& q, const QuirkSetting& s);
// A named OS profile's quirk set (a windows/os.h row: any name or alias windows/README.md lists),
// or none for "rrp-exact" (plain MS-RRP). NotFound for another name.
Status profile_quirks(std::string_view profile, Quirks& q);
// What a capture's fingerprint says (its profile, then more_data with params, process_v1_disabled,
// pipe_not_available_first; a synth capture's more_data, its profile's copy, is left to the profile). The JSON form reads it with captures::from_json: unknown keys are
// ignored; text that is not a JSON object is InvalidArgument.
Status fingerprint_quirks(const captures::Fingerprint& fp, Quirks& q);
Status fingerprint_quirks(const std::string& json, Quirks& q);
// The quirk names apply_setting knows (quirk_table.h), for help texts.
std::vector<std::string> quirk_names();
// The settings that give back `q`, one per quirk it has on (and extra-objects/costly either way),
// in table order: what the admin API shows, each as --quirk takes it.
std::vector<std::string> quirk_settings(const Quirks& q);

}  // namespace perfsim::replayer
