// `perfsim redact`: a capture with the names that identify a customer's host replaced by tokens,
// so the customer can send it. Which names are replaced, and why, is captures/README.md
// "Redaction"; in short: the host, domain and user names (host record, PERF_DATA_BLOCK system
// names, "Foreign" value names, the registry values that hold them), every instance name but the
// structural ones collectors key on (_Total, processor and disk numbers, drive letters, ...), and
// free-text registry values; each original gets one token (case-insensitively, as Windows compares
// names) used everywhere it appears, free text and the fingerprint included. Per-instance object
// names keep their product prefix and lose the instance ("MSSQL$FIBU:Buffer Manager" ->
// "MSSQL$INST-0001:Buffer Manager") in the name tables, registry keys and values, the catalog,
// name-table answers and the fingerprint; --redact adds names or patterns. Object and counter
// indices, counter types and every value are kept byte for byte.
//
// Contract:
//  - Streaming: one record is read, redacted and written at a time (the reader gives pages back),
//    so memory stays at a few samples whatever the capture's length. The host record comes first
//    as always; the other metadata (registry, names, catalog, fingerprint) is written after the
//    query records, when every name is known (FORMAT.md allows metadata anywhere after the host).
//  - The output and the map are written to temporary names and renamed into place only when both
//    are whole; on any failure neither exists and the Status names the record and its offset.
//  - A damaged input is refused (Corruption naming the offset), as convert does.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "captures/capture.h"
#include "captures/writer.h"
#include "core/status.h"

namespace perfsim::captures {

// What a token stands for: the first part of the token ("HOST-0001", "proc-0001").
enum class TokenKind {
  kHost,
  kDomain,
  kUser,
  kOrganization,
  kProcess,
  kSite,
  kDatabase,
  kVolume,
  kAdapter,
  kInstance,
  kText,
  kNamedInstance,  // the customer's name in a per-instance object name: MSSQL$<name>:Buffer Manager
  kRedacted,       // --redact NAME or a word /REGEX/ matched
  kCount
};
const char* token_kind_name(TokenKind k);  // the map file's key: "host", "process", ...

// Original -> token, consistent across a capture: the first kind an original is met as picks its
// token, and every later sight of the same name (compared case-insensitively) gets that token.
class TokenMap {
 public:
  // The token for `original` (made on first sight), or `original` itself when it is kept.
  std::string token(std::string_view original, TokenKind kind);
  // `text` with every original of this map (longest first) replaced by its token where it stands
  // as a whole word (not inside a longer run of letters and digits), case-insensitively.
  // `kinds` (bits of 1 << TokenKind) limits it to those kinds' originals.
  std::string substitute(std::string_view text, uint32_t kinds = ~0u) const;
  void keep(std::string_view name);  // --keep: never replaced
  bool kept(std::string_view name) const;
  size_t size() const { return by_key_.size(); }
  std::vector<std::string> originals() const;  // every original replaced, case-folded
  size_t count(TokenKind k) const;
  // {"format": "perfsim-redact-map/1", "tokens": {"host": {ORIGINAL: TOKEN, ...}, ...}}
  std::string to_json() const;

 private:
  struct Entry {
    std::string original;  // as first seen
    std::string token;
    TokenKind kind;
  };
  std::map<std::string, Entry, std::less<>> by_key_;  // case-folded original -> entry
  std::map<size_t, size_t> lengths_;                  // original length -> how many (substitute's)
  std::map<std::string, bool> tokens_;                // tokens issued, case-folded
  std::map<std::string, bool> keep_;                  // case-folded
  uint32_t next_[size_t(TokenKind::kCount)] = {};
};

// The part of an instance name that identifies something, between the structural affixes
// collectors key on: "svchost#1" -> "svchost" + "#1", "svchost/12" (Thread), "sqlservr:4242"
// (Process V2's PID), "4242_DefaultAppPool" (W3SVC_W3WP's PID). `prefix` + core + `suffix` == name.
struct NameParts {
  std::string prefix, core, suffix;
};
NameParts split_instance_name(std::string_view name);
// True for a core that names nothing of the customer's: "", _Total, <Total>, Total, _Global_,
// Idle, System, the session names Services, Console and RDP-Tcp, processor lists ("0", "0,3", "0,_Total"), disk numbers with drive letters
// ("1 C: D:"), drive letters ("C:"), HarddiskVolumeN, "\??\C:\pagefile.sys".
bool structural_instance_name(std::string_view core);
// The token kind for the instances of an object, by its English name ("Process", "Web Service").
TokenKind instance_kind(std::string_view object_name);

// The kinds whose originals are replaced inside object and counter names, help texts, registry
// keys and providers: a name Windows' tables also use ("Memory" as an instance) must not be.
inline constexpr uint32_t kInNameKinds =
    1u << unsigned(TokenKind::kNamedInstance) | 1u << unsigned(TokenKind::kRedacted);
// The kinds substituted into the OS facts kept as free text (ComSpec, PATHEXT, TEMP, ...): who the
// host and its people are. Not process or instance names: "cmd" is a process of most hosts, and
// ComSpec's "cmd.exe" or PATHEXT's ".CMD" are facts about Windows, not about the customer.
inline constexpr uint32_t kInOsFactKinds = kInNameKinds | 1u << unsigned(TokenKind::kHost) |
                                           1u << unsigned(TokenKind::kDomain) | 1u << unsigned(TokenKind::kUser) |
                                           1u << unsigned(TokenKind::kOrganization);

// The instance name a per-instance object name carries: a product prefix, '$', the name the
// customer gave, then ':' or the end ("MSSQL$FIBU:Buffer Manager", "SQLAgent$FIBU:Jobs",
// "MSOLAP$TAB", a service key's "MSSQL$FIBU"); empty when `name` is none.
std::string named_instance(std::string_view name);

struct RedactOptions {
  std::vector<std::string> keep;    // names left as they are (--keep)
  std::vector<std::string> redact;  // more names replaced (--redact NAME, or /REGEX/: every word it matches)
  bool check = false;               // list what looks like a name and was kept (RedactReport::kept)
  std::set<std::string> ordinary;   // --check: object names (case-folded) Windows itself serves, not listed
  WriterOptions writer;
};

// A string that looks like a name and was left as it is (--check), and where it is.
struct KeptName {
  std::string where;  // "object", "instance of OBJECT", "registry KEY\NAME"
  std::string text;
};

struct RedactReport {
  uint64_t records = 0;
  uint64_t instances_renamed = 0;  // instance names replaced, over every sample
  uint64_t registry_values = 0;    // registry values changed
  uint64_t in_bytes = 0, out_bytes = 0;
  std::vector<KeptName> kept;  // with RedactOptions::check, each (where, text) once
};

// A --redact argument: /REGEX/ (RE2 syntax, case-insensitive) or a name; InvalidArgument for a
// regular expression that does not compile.
Status check_redact_pattern(const std::string& arg);

// Redacts `in` into `out` and writes the mapping to `map_path` (JSON, TokenMap::to_json), both
// through write_replacing. `map` receives the mapping too.
Status redact_capture(const std::string& in, const std::string& out, const std::string& map_path,
                      const RedactOptions& opt, TokenMap& map, RedactReport* report = nullptr);

}  // namespace perfsim::captures
