// `perfsim redact` (redact.h; what is replaced and why: README.md "Redaction").
#include "captures/redact.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>

#include "captures/reader.h"
#include "captures/registry_values.h"
#include "captures/samples.h"
#include "captures/system_values.h"
#include "core/json.h"
#include "core/utf16.h"
#include "perfdata/model.h"
#include "perfdata/names.h"
#include "windows/constants.h"
#include "re2/re2.h"

namespace perfsim::captures {
namespace {

// ASCII case folding: Windows compares host, user and instance names case-insensitively; bytes
// of other scripts are compared as they are.
std::string fold(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return out;
}

bool starts_with_i(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

bool word_byte(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || u >= 0x80;
}

// Host and domain tokens are upper case as NetBIOS names are; all fit a NetBIOS name (15 bytes).
constexpr const char* kPrefix[] = {"HOST", "DOMAIN", "user", "org",  "proc", "site", "db",
                                   "vol",  "nic",    "inst", "text", "INST", "name"};
static_assert(std::size(kPrefix) == size_t(TokenKind::kCount));
constexpr const char* kKindName[] = {"host", "domain",         "user",    "organization", "process",
                                     "site", "database",       "volume",  "adapter",      "instance",
                                     "text", "named_instance", "redacted"};
static_assert(std::size(kKindName) == size_t(TokenKind::kCount));

}  // namespace

const char* token_kind_name(TokenKind k) { return kKindName[size_t(k)]; }

std::string TokenMap::token(std::string_view original, TokenKind kind) {
  if (original.empty() || kept(original)) return std::string(original);
  const std::string key = fold(original);
  if (auto it = by_key_.find(key); it != by_key_.end()) return it->second.token;
  std::string tok;
  do {  // a token never equals an original or another token (an input redacted before)
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s-%04u", kPrefix[size_t(kind)], ++next_[size_t(kind)]);
    tok = buf;
  } while (tokens_.count(fold(tok)) || by_key_.count(fold(tok)));
  tokens_[fold(tok)] = true;
  ++lengths_[key.size()];
  by_key_.emplace(key, Entry{std::string(original), tok, kind});
  return tok;
}

void TokenMap::keep(std::string_view name) { keep_[fold(name)] = true; }
bool TokenMap::kept(std::string_view name) const { return keep_.count(fold(name)) > 0; }

size_t TokenMap::count(TokenKind k) const {
  return size_t(std::count_if(by_key_.begin(), by_key_.end(), [k](const auto& e) { return e.second.kind == k; }));
}

std::string TokenMap::substitute(std::string_view text, uint32_t kinds) const {
  // One left-to-right pass, longest original first at each word start, so a token just written
  // is never matched again ("proc" inside "proc-0001"). Each word start tries only the lengths
  // some original has (longest first) with one lookup each: the cost follows the text and the
  // number of distinct lengths, not the number of originals (tens of thousands of instances).
  const std::string folded = fold(text);
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const bool at_word_start = i == 0 || !word_byte(text[i - 1]);
    const Entry* hit = nullptr;
    size_t hit_len = 0;
    if (at_word_start)
      for (auto len = lengths_.rbegin(); len != lengths_.rend() && !hit; ++len) {
        const size_t end = i + len->first;
        if (end > text.size() || (end < text.size() && word_byte(text[end]))) continue;
        if (auto it = by_key_.find(std::string_view(folded).substr(i, len->first));
            it != by_key_.end() && (kinds >> unsigned(it->second.kind) & 1u)) {
          hit = &it->second;
          hit_len = len->first;
        }
      }
    if (hit) {
      out += hit->token;
      i += hit_len;
    } else {
      out += text[i++];
    }
  }
  return out;
}

std::string TokenMap::to_json() const {
  nlohmann::ordered_json tokens = nlohmann::ordered_json::object();
  for (size_t k = 0; k < size_t(TokenKind::kCount); ++k) {
    nlohmann::ordered_json kind = nlohmann::ordered_json::object();
    std::vector<const Entry*> entries;
    for (const auto& e : by_key_)
      if (e.second.kind == TokenKind(k)) entries.push_back(&e.second);
    std::sort(entries.begin(), entries.end(), [](const Entry* a, const Entry* b) { return a->token < b->token; });
    // Appended, not kind[original] = token: ordered_json looks a key up by a scan of the keys
    // before it, which made the map quadratic in names (60,000 instances: most of 22.8 s). The
    // originals are distinct (by_key_'s keys are), so nothing needs looking up.
    auto& members = kind.get_ref<nlohmann::ordered_json::object_t&>();
    members.reserve(entries.size());
    for (const Entry* e : entries) members.emplace_back(e->original, e->token);
    if (!kind.empty()) tokens[kKindName[k]] = kind;
  }
  nlohmann::ordered_json j = {{"format", "perfsim-redact-map/1"}, {"tokens", tokens}};
  // Names are bytes from the capture, not always UTF-8 (a Windows-1252 host name): each invalid
  // byte is written U+FFFD, as core/json.h's json_text does, instead of dump() throwing.
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

namespace {

// What std::regex's \s was in the C locale (isspace), so that every name splits as it did.
bool blank(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
bool digit(char c) { return c >= '0' && c <= '9'; }
bool letter(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool all_digits(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), digit); }

// Processors: "0", "0,3", "0,_Total" (Processor Information).
bool processor_list(std::string_view s) {
  for (size_t from = 0, n = 0;; ++n) {
    const size_t comma = std::min(s.find(',', from), s.size());
    const std::string_view piece = s.substr(from, comma - from);
    if (!all_digits(piece) && (n == 0 || piece != "_Total")) return false;
    if (comma == s.size()) return true;
    from = comma + 1;
  }
}

// PhysicalDisk: "0", "1 C: D:".
bool disk_number(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && digit(s[i])) ++i;
  if (i == 0) return false;
  for (; i < s.size(); i += 3)
    if (s.size() - i < 3 || s[i] != ' ' || !letter(s[i + 1]) || s[i + 2] != ':') return false;
  return true;
}

}  // namespace

NameParts split_instance_name(std::string_view name) {
  // Peeled from the outside in, so "svchost#1/3" and "4242_w3wp#2" split too: each round takes a
  // duplicate suffix "#N" (perflib), then a Thread "/N" or Process V2 ":PID" suffix, each only
  // after a core that ends in a non-blank, then a W3SVC_W3WP "PID_" prefix before a core that
  // holds a non-blank. This was std::regex_match of ^(.*\S)(#[0-9]+)$, ^(.*\S)([/:][0-9]+)$ and
  // ^([0-9]+_)(.*\S.*)$, which recursed once a character: a 50,000-character name overflowed the
  // stack (issue 54). Now the core is a range of `name` and each scan starts where the last one
  // of its side stopped: linear in the name.
  NameParts p;
  // The patterns' '.' stopped at line ends: a name with one never split.
  if (name.find_first_of("\n\r") != std::string_view::npos) {
    p.core = std::string(name);
    return p;
  }
  size_t b = 0, e = name.size();  // the core: name[b, e)
  size_t last = e;                // one past the core's last non-blank (b when it has none)
  while (last > 0 && blank(name[last - 1])) --last;
  // Where the digits ending at `e` start, and where those starting at `b` end: a side's scan is
  // redone only when that side moved, and never crosses the other side's affix (not a digit).
  size_t tail_of = SIZE_MAX, tail = 0, head_of = SIZE_MAX, head = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (std::string_view marks : {std::string_view("#"), std::string_view("/:")}) {
      if (tail_of != e) {
        for (tail = e; tail > b && digit(name[tail - 1]);) --tail;
        tail_of = e;
      }
      if (tail < e && tail >= b + 2 && marks.find(name[tail - 1]) != std::string_view::npos && !blank(name[tail - 2])) {
        e = last = tail - 1;
        changed = true;
      }
    }
    if (head_of != b) {
      for (head = b; head < e && digit(name[head]);) ++head;
      head_of = b;
    }
    if (head > b && head < e && name[head] == '_' && last > head + 1) {
      b = head + 1;
      changed = true;
    }
  }
  p.prefix = std::string(name.substr(0, b));
  p.core = std::string(name.substr(b, e - b));
  p.suffix = std::string(name.substr(e));
  return p;
}

bool structural_instance_name(std::string_view core) {
  // Idle and System: the kernel's pseudo-processes; Services, Console and RDP-Tcp (#N): Terminal
  // Services Session's session 0, console and remote sessions, named so on every host.
  static const char* const kNames[] = {"",     "_Total", "<Total>",  "Total",   "_Global_",
                                       "Idle", "System", "Services", "Console", "RDP-Tcp"};
  for (const char* n : kNames)
    if (iequals(core, n)) return true;
  // The rest compared as written (case matters), as the regular expression that was here did.
  constexpr std::string_view kVolume = "HarddiskVolume", kPagefile = ":\\pagefile.sys";
  return processor_list(core) || disk_number(core) ||
         (core.size() == 2 && letter(core[0]) && core[1] == ':') ||                                 // LogicalDisk: "C:"
         (core.substr(0, kVolume.size()) == kVolume && all_digits(core.substr(kVolume.size()))) ||  // no letter
         (core.size() == 4 + 1 + kPagefile.size() && core.substr(0, 4) == "\\??\\" && letter(core[4]) &&
          core.substr(5) == kPagefile);  // Paging File: Windows' default path
}

TokenKind instance_kind(std::string_view object) {
  for (const char* n : {"Process", "Thread", "Process V2", "Thread V2", "Image", "Process Address Space",
                        "Thread Details", "Job Object Details"})
    if (iequals(object, n)) return TokenKind::kProcess;
  if (starts_with_i(object, ".NET CLR")) return TokenKind::kProcess;
  for (const char* n : {"Web Service", "APP_POOL_WAS", "W3SVC_W3WP", "Web Service Cache"})
    if (iequals(object, n)) return TokenKind::kSite;
  if (starts_with_i(object, "ASP.NET Ap")) return TokenKind::kSite;
  if (starts_with_i(object, "SQLServer:") || starts_with_i(object, "MSSQL$")) return TokenKind::kDatabase;
  for (const char* n : {"LogicalDisk", "PhysicalDisk", "Paging File"})
    if (iequals(object, n)) return TokenKind::kVolume;
  for (const char* n : {"Network Interface", "Network Adapter"})
    if (iequals(object, n)) return TokenKind::kAdapter;
  return TokenKind::kInstance;
}

std::string named_instance(std::string_view name) {
  const size_t dollar = name.find('$');
  if (dollar == std::string_view::npos || dollar == 0) return "";
  const std::string_view product = name.substr(0, dollar);
  if (!std::isalpha(static_cast<unsigned char>(product[0]))) return "";
  // Product and instance are single words (SQL Server instance names have no spaces): a "$" in
  // a sentence is not one.
  const auto word = [](std::string_view w) {
    return !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '#' || c == '@';
    });
  };
  const size_t end = name.find_first_of(":$\\", dollar + 1);
  const std::string_view inst = name.substr(dollar + 1, end == std::string_view::npos ? end : end - dollar - 1);
  return word(product) && word(inst) ? std::string(inst) : "";
}

namespace {

// The operator's /REGEX/ in RE2, case-insensitive as Windows compares names. RE2 runs in time
// linear in the text; ECMAScript's backtracking (std::regex) took 59.6 s for /(a+)+$/ on 28 a's
// and a '!' (issue 54). UTF-8, as names are here. Its errors go into our message, not to stderr.
std::unique_ptr<re2::RE2> compile_pattern(const std::string& arg) {
  re2::RE2::Options opt;
  opt.set_case_sensitive(false);
  opt.set_log_errors(false);
  return std::make_unique<re2::RE2>(arg.substr(1, arg.size() - 2), opt);
}

bool is_pattern(const std::string& arg) { return arg.size() >= 2 && arg.front() == '/' && arg.back() == '/'; }

}  // namespace

Status check_redact_pattern(const std::string& arg) {
  if (!is_pattern(arg)) return Status::Ok();
  const std::unique_ptr<re2::RE2> re = compile_pattern(arg);
  if (re->ok()) return Status::Ok();
  std::string why = "--redact " + arg + ": not a regular expression RE2 takes (" + re->error() + ")";
  // What ECMAScript has and RE2 does not (both need backtracking): said, with what to write instead.
  if (re->error_code() == re2::RE2::ErrorBadEscape || re->error_code() == re2::RE2::ErrorBadPerlOp)
    why +=
        "; RE2 has no backreferences (\\1) or lookaround ((?=...), (?!...), (?<=...)): give the words themselves "
        "(--redact NAME, or an alternation such as /acme|contoso/)";
  return Status::InvalidArgument(why + "; the syntax is RE2's (https://github.com/google/re2/wiki/Syntax)");
}

namespace {

// --redact's /REGEX/ arguments: every word a match touches (the run of letters and digits around
// it, so the whole-word substitution finds it) becomes a text token.
struct Patterns {
  std::vector<std::unique_ptr<re2::RE2>> regexes;
  void seed(std::string_view text, TokenMap& map) const {
    for (const auto& re : regexes) {
      // Successive matches, each searched in the whole text from where the last ended (so ^ and
      // \b see what is before it); an empty match moves on by a character.
      for (size_t pos = 0; pos <= text.size();) {
        re2::StringPiece m;
        if (!re->Match(re2::StringPiece(text.data(), text.size()), pos, text.size(), re2::RE2::UNANCHORED, &m, 1))
          break;
        size_t from = size_t(m.data() - text.data()), to = from + m.size();
        if (m.empty()) {
          for (pos = from + 1; pos < text.size() && (uint8_t(text[pos]) & 0xC0) == 0x80;) ++pos;
          continue;
        }
        pos = to;
        while (from > 0 && word_byte(text[from - 1])) --from;
        while (to < text.size() && word_byte(text[to])) ++to;
        map.token(text.substr(from, to - from), TokenKind::kRedacted);
      }
    }
  }
};

// A name from the metadata: its per-instance part and what the patterns match become tokens.
void seed_name(std::string_view text, const Patterns& p, TokenMap& map) {
  if (const std::string inst = named_instance(text); !inst.empty()) map.token(inst, TokenKind::kNamedInstance);
  p.seed(text, map);
}

// Every name table string, registry key component and string value, and provider: seeded before
// the records, so an instance of the same name gets the same token.
void seed_metadata(const Capture& meta, const Patterns& p, TokenMap& map) {
  for (const NameTable& t : meta.names) {
    for (const std::string& s : perfdata::parse_multisz(t.counter)) seed_name(s, p, map);
    for (const std::string& s : perfdata::parse_multisz(t.help)) p.seed(s, map);
  }
  for (const RegistryValue& v : meta.registry) {
    for (size_t from = 0; from <= v.key.size();) {
      const size_t end = std::min(v.key.find('\\', from), v.key.size());
      seed_name(std::string_view(v.key).substr(from, end - from), p, map);
      from = end + 1;
    }
    p.seed(v.name, map);
    if (v.type == windows::kRegSz || v.type == windows::kRegExpandSz || v.type == windows::kRegMultiSz)
      for (const std::string& text : v.type == windows::kRegMultiSz ? perfdata::parse_multisz(v.data)
                                                                    : std::vector<std::string>{reg_sz_text(v.data)})
        p.seed(text, map);
  }
  for (const ObjectInfo& o : meta.catalog) seed_name(o.provider, p, map);
}

// Registry values that hold who the host is: replaced by the token of their kind, so the same
// name in the perf data, the registry and the fingerprint reads the same.
struct IdentityValue {
  const char* key;
  const char* name;
  TokenKind kind;
};
constexpr char kTcpip[] = "SYSTEM\\CurrentControlSet\\Services\\Tcpip\\Parameters";
constexpr char kWinlogon[] = "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Winlogon";
const IdentityValue kIdentity[] = {
    {kComputerNameKey, "ComputerName", TokenKind::kHost},
    {"SYSTEM\\CurrentControlSet\\Control\\ComputerName\\ActiveComputerName", "ComputerName", TokenKind::kHost},
    {kTcpip, "Hostname", TokenKind::kHost},
    {kTcpip, "NV Hostname", TokenKind::kHost},
    {kTcpip, "Domain", TokenKind::kDomain},
    {kTcpip, "NV Domain", TokenKind::kDomain},
    {kTcpip, "DhcpDomain", TokenKind::kDomain},
    {kEnvironmentKey, "COMPUTERNAME", TokenKind::kHost},
    {kEnvironmentKey, "USERDOMAIN", TokenKind::kDomain},
    {kEnvironmentKey, "USERDNSDOMAIN", TokenKind::kDomain},
    {kEnvironmentKey, "USERNAME", TokenKind::kUser},
    {kWinlogon, "DefaultUserName", TokenKind::kUser},
    {kWinlogon, "AltDefaultUserName", TokenKind::kUser},
    {kWinlogon, "DefaultDomainName", TokenKind::kDomain},
    {kWinlogon, "AltDefaultDomainName", TokenKind::kDomain},
    {kWinlogon, "CachePrimaryDomain", TokenKind::kDomain},
    {kCurrentVersionKey, "RegisteredOwner", TokenKind::kUser},
    {kCurrentVersionKey, "RegisteredOrganization", TokenKind::kOrganization},
};

// Free-text values kept as they are (who the host is still substituted, kInOsFactKinds): facts about the OS
// and the processor a reproduction needs, none about the customer.
const std::pair<const char*, const char*> kOsFacts[] = {
    {kCurrentVersionKey, "ProductName"},
    {kCurrentVersionKey, "CurrentVersion"},
    {kCurrentVersionKey, "CurrentBuildNumber"},
    {kCurrentVersionKey, "CurrentBuild"},
    {kCurrentVersionKey, "CSDVersion"},
    {kCurrentVersionKey, "EditionID"},
    {kCurrentVersionKey, "SystemRoot"},
    {kCurrentVersionKey, "InstallationType"},
    {kCurrentVersionKey, "ReleaseId"},
    {kCurrentVersionKey, "DisplayVersion"},
    {kCurrentVersionKey, "CurrentType"},
    {kCurrentVersionKey, "BuildLab"},
    {kCurrentVersionKey, "BuildLabEx"},
    {kEnvironmentKey, "ComSpec"},
    {kEnvironmentKey, "NUMBER_OF_PROCESSORS"},
    {kEnvironmentKey, "OS"},
    {kEnvironmentKey, "PATHEXT"},
    {kEnvironmentKey, "PROCESSOR_ARCHITECTURE"},
    {kEnvironmentKey, "PROCESSOR_IDENTIFIER"},
    {kEnvironmentKey, "PROCESSOR_LEVEL"},
    {kEnvironmentKey, "PROCESSOR_REVISION"},
    {kEnvironmentKey, "TEMP"},
    {kEnvironmentKey, "TMP"},
    {kEnvironmentKey, "windir"},
    {kProductOptionsKey, "ProductType"},
    {kProductOptionsKey, "ProductSuite"},
};

const TokenKind* identity_kind(const RegistryValue& v) {
  for (const IdentityValue& id : kIdentity)
    if (iequals(v.key, id.key) && iequals(v.name, id.name)) return &id.kind;
  return nullptr;
}

// Kept free text: the OS facts above, Perflib and its subkeys (the perf counter setup), and a
// provider's Services\NAME\Performance values (Library, Open, Collect, Close, Object List: what
// lodctr registered; its service name is the catalog's provider, kept too).
bool kept_text(const RegistryValue& v) {
  for (const auto& [key, name] : kOsFacts)
    if (iequals(v.key, key) && iequals(v.name, name)) return true;
  const std::string key = fold(v.key);
  if (key.find("\\perflib") != std::string::npos) return true;
  return key.rfind("system\\currentcontrolset\\services\\", 0) == 0 && key.size() > 12 &&
         key.compare(key.size() - 12, 12, "\\performance") == 0;
}

bool string_type(uint32_t t) { return t == windows::kRegSz || t == windows::kRegExpandSz || t == windows::kRegMultiSz; }

// The registry value with its strings redacted: `edit` maps each string to its replacement.
template <class Edit>
bool edit_strings(RegistryValue& v, Edit edit) {
  if (v.type == windows::kRegMultiSz) {
    std::vector<std::string> strings = perfdata::parse_multisz(v.data);
    for (std::string& s : strings) s = edit(s);
    Bytes data = perfdata::build_multisz(strings);
    if (data == v.data) return false;
    v.data = std::move(data);
    return true;
  }
  const std::string text = reg_sz_text(v.data);
  const std::string redacted = edit(text);
  if (redacted == text) return false;
  v.data = reg_sz(redacted);
  return true;
}

void seed_identity(const Capture& meta, TokenMap& map) {
  map.token(meta.host.name, TokenKind::kHost);
  for (const RegistryValue& v : meta.registry)
    if (const TokenKind* kind = identity_kind(v); kind && string_type(v.type)) {
      std::string text = reg_sz_text(v.data);
      if (*kind == TokenKind::kHost && text.rfind("\\\\", 0) == 0) text = text.substr(2);  // LOGONSERVER-style
      map.token(text, *kind);
    }
}

// Registry, after every record: free text may name instances met only in the samples.
uint64_t redact_registry(std::vector<RegistryValue>& registry, TokenMap& map, RedactReport& report, bool check) {
  uint64_t changed = 0;
  for (RegistryValue& v : registry) {
    // A key names what it is for: Services\MSSQL$FIBU\Performance.
    if (std::string key = map.substitute(v.key, kInNameKinds); key != v.key) {
      v.key = std::move(key);
      ++changed;
    }
    if (!string_type(v.type)) continue;
    if (const TokenKind* kind = identity_kind(v))
      changed += edit_strings(v, [&](const std::string& s) { return map.token(s, *kind); });
    else if (kept_text(v))  // Perflib's tables as meta.names are: only the kinds that go inside names
      changed +=
          edit_strings(v, [&, perflib = fold(v.key).find("\\perflib") != std::string::npos](const std::string& s) {
            return map.substitute(s, perflib ? kInNameKinds : kInOsFactKinds);
          });
    else
      changed += edit_strings(v, [&](const std::string& s) {
        const std::string sub = map.substitute(s);
        return sub.empty() || map.kept(s) ? sub : map.token(s, TokenKind::kText);
      });
    // --check: the free text kept whole (OS facts, a provider's Library path), not Perflib's tables.
    if (check && v.type != windows::kRegMultiSz && kept_text(v) && !identity_kind(v) &&
        fold(v.key).find("\\perflib") == std::string::npos)
      report.kept.push_back({"registry " + v.key + "\\" + v.name, reg_sz_text(v.data)});
  }
  return changed;
}

// The name tables (every language, names and help) and the catalog's providers, substituted.
void redact_names(Capture& meta, const TokenMap& map) {
  for (NameTable& t : meta.names)
    for (Bytes* table : {&t.counter, &t.help}) {
      std::vector<std::string> strings = perfdata::parse_multisz(*table);
      bool changed = false;
      for (std::string& str : strings)
        if (std::string sub = map.substitute(str, kInNameKinds); sub != str) str = std::move(sub), changed = true;
      if (changed) *table = perfdata::build_multisz(strings);
    }
  for (ObjectInfo& o : meta.catalog) o.provider = map.substitute(o.provider, kInNameKinds);
}

void substitute_json(nlohmann::json& j, const TokenMap& map) {
  if (j.is_string()) {
    j = map.substitute(j.get<std::string>());
  } else if (j.is_array()) {
    for (nlohmann::json& e : j) substitute_json(e, map);
  } else if (j.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto& [k, v] : j.items()) {
      substitute_json(v, map);
      out[map.substitute(k)] = std::move(v);
    }
    j = std::move(out);
  }
}

// The fingerprint's free text (findings, value names in its per-query facts): every string and
// key walked, known names substituted; not parseable as JSON, the text itself.
std::string redact_fingerprint(const std::string& json, const TokenMap& map) {
  if (json.empty()) return json;
  nlohmann::json j = parse_json_or_discarded(json);  // bounded depth: substitute_json recurses
  if (j.is_discarded()) return map.substitute(json);
  substitute_json(j, map);
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Where `needle` (folded ASCII) occurs in `hay` as ASCII or UTF-16LE text, case-insensitively.
bool holds_name(ByteView hay, const std::string& needle) {
  if (needle.empty()) return false;
  auto lower = [](uint8_t c) { return c >= 'A' && c <= 'Z' ? uint8_t(c - 'A' + 'a') : c; };
  for (size_t stride : {size_t(1), size_t(2)}) {
    const size_t span = needle.size() * stride;
    for (size_t i = 0; i + span <= hay.size(); ++i) {
      size_t k = 0;
      while (k < needle.size() && lower(hay[i + k * stride]) == uint8_t(needle[k]) &&
             (stride == 1 || hay[i + k * stride + 1] == 0))
        ++k;
      if (k == needle.size()) return true;
    }
  }
  return false;
}

struct RecordContext {
  TokenMap& map;
  const std::map<uint32_t, std::string>& object_names;
  RedactReport& report;
  const Patterns& patterns;
  const RedactOptions& opt;
  std::unordered_set<std::string> listed = {};  // --check: "where\ntext" already in report.kept
  // Instance name -> what it becomes: a host has a few hundred names and every sample repeats
  // them, so each is split and tested once.
  std::unordered_map<std::string, std::string> renamed = {};
};

// --check: a name left as it is, listed once. Object names Windows itself serves (opt.ordinary)
// are not listed: they say nothing of the customer.
void note_kept(RecordContext& c, const std::string& where, const std::string& text) {
  if (where == "object" && c.opt.ordinary.count(fold(text))) return;
  if (c.listed.insert(where + "\n" + text).second) c.report.kept.push_back({where, text});
}

// What instance `name` of an object whose instances are `kind` becomes (itself when kept).
const std::string& renamed(RecordContext& c, const std::string& name, TokenKind kind) {
  auto it = c.renamed.find(name);
  if (it != c.renamed.end()) return it->second;
  std::string to = name;
  if (!c.map.kept(name)) {
    const NameParts p = split_instance_name(name);
    if (!structural_instance_name(p.core)) to = p.prefix + c.map.token(p.core, kind) + p.suffix;
  }
  if (!c.patterns.regexes.empty()) {
    c.patterns.seed(name, c.map);
    to = c.map.substitute(to, kInNameKinds);
  }
  return c.renamed.emplace(name, std::move(to)).first->second;
}

// "Foreign COMPUTER [indices]" (perflib's query of another computer): the computer is a host name.
std::string redact_value_name(const std::string& name, TokenMap& map) {
  if (!starts_with_i(name, "Foreign ")) return name;
  const size_t start = name.find_first_not_of(' ', 8);
  if (start == std::string::npos) return name;
  const size_t end = std::min(name.find(' ', start), name.size());
  return name.substr(0, start) + map.token(name.substr(start, end - start), TokenKind::kHost) + name.substr(end);
}

Status redact_block(QueryRecord& r, RecordContext& c) {
  perfdata::DataBlock block;
  if (Status s = perfdata::parse(r.payload, block); !s.ok()) {
    // Not a block perfsim can walk (a truncated answer): kept only when it holds no known name.
    for (const std::string& name : c.map.originals())
      if (holds_name(r.payload, name))
        return Status::Corruption("its payload is not a PERF_DATA_BLOCK perfsim can rewrite (" + s.message() +
                                  ") and holds a name being redacted");
    return Status::Ok();
  }
  bool changed = false;
  if (const std::string sys = utf16_to_utf8(block.system_name()); !sys.empty()) {
    const std::string tok = c.map.token(sys, TokenKind::kHost);
    if (tok != sys) {
      perfdata::set_system_name(block, utf8_to_utf16(tok));
      changed = true;
    }
  }
  for (perfdata::Object& o : block.objects) {
    const auto it = c.object_names.find(o.name_index);
    const TokenKind kind = it == c.object_names.end() ? TokenKind::kInstance : instance_kind(it->second);
    if (c.opt.check && it != c.object_names.end()) note_kept(c, "object", c.map.substitute(it->second, kInNameKinds));
    for (perfdata::Instance& in : o.instances) {
      const std::string name = utf16_to_utf8(in.name());
      const std::string& to = renamed(c, name, kind);
      if (c.opt.check && to == name && !structural_instance_name(split_instance_name(name).core))
        note_kept(c, "instance of " + (it == c.object_names.end() ? std::to_string(o.name_index) : it->second), name);
      if (to == name) continue;
      perfdata::set_instance_name(in, utf8_to_utf16(to));
      ++c.report.instances_renamed;
      changed = true;
    }
  }
  if (!changed) return Status::Ok();
  const size_t old_size = r.payload.size();
  Bytes built = perfdata::build(block);
  // Bytes past TotalByteLength (a host's stale buffer) are kept in length, zeroed: they may hold
  // anything, and no collector reads them.
  const uint32_t old_total = load_le32(&r.payload[winperf::data_block::kTotalByteLength]);
  if (old_size > old_total) built.resize(built.size() + (old_size - old_total), 0);
  // The size the host reported moves with the payload (it may differ from it: quirks).
  if (r.size >= old_size) r.size = uint32_t(int64_t(r.size) + int64_t(built.size()) - int64_t(old_size));
  r.payload = std::move(built);
  return Status::Ok();
}

// A name-table answer ("Counter 009": REG_MULTI_SZ) with its strings substituted, its reported
// size moving with it.
void redact_strings(QueryRecord& r, const TokenMap& map) {
  std::vector<std::string> strings = perfdata::parse_multisz(r.payload);
  bool changed = false;
  for (std::string& str : strings)
    if (std::string sub = map.substitute(str, kInNameKinds); sub != str) str = std::move(sub), changed = true;
  if (!changed) return;
  Bytes built = perfdata::build_multisz(strings);
  if (r.size >= r.payload.size())
    r.size = uint32_t(int64_t(r.size) + int64_t(built.size()) - int64_t(r.payload.size()));
  r.payload = std::move(built);
}

Status redact_record(QueryRecord& r, RecordContext& c) {
  r.value_name = redact_value_name(r.value_name, c.map);
  if (r.payload.empty()) return Status::Ok();
  if (r.reg_type == windows::kRegMultiSz) {
    redact_strings(r, c.map);
    return Status::Ok();
  }
  if (r.reg_type != windows::kRegBinary) return Status::Ok();
  return redact_block(r, c);
}

Status write_private(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);  // the map reverses it
  if (fd < 0) return Status::IOError("cannot create " + path + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return Status::IOError("cannot write " + path + ": " + std::strerror(errno));
    }
    done += size_t(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0)
    return Status::IOError("cannot write " + path + ": " + std::strerror(errno));
  return Status::Ok();
}

Status redact_records(Reader& in, Writer& w, RecordContext& c) {
  QueryRecord rec;
  for (size_t i = 0; i < in.records().size(); ++i) {
    Status st = in.read_record(i, rec);
    if (st.ok()) st = redact_record(rec, c);
    if (st.ok()) st = w.append(rec);
    if (!st.ok()) {
      const RecordInfo& info = in.records()[i];
      const std::string where = "record " + std::to_string(i) + " (tick " + std::to_string(info.tick) + ", " +
                                in.queries()[info.query] + ") at offset " + std::to_string(info.offset) + ": ";
      return st.code() == Status::Code::kIOError ? Status::IOError(where + st.message())
                                                 : Status::Corruption(where + st.message());
    }
    ++c.report.records;
  }
  return Status::Ok();
}

}  // namespace

std::vector<std::string> TokenMap::originals() const {
  std::vector<std::string> out;
  for (const auto& e : by_key_) out.push_back(e.first);
  return out;
}

Status redact_capture(const std::string& in, const std::string& out, const std::string& map_path,
                      const RedactOptions& opt, TokenMap& map, RedactReport* report_out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const std::string& p : {out, map_path})
    if (fs::exists(p, ec) && fs::equivalent(in, p, ec))
      return Status::InvalidArgument("redact: " + p + " is the input; write to another file");
  if (out == map_path) return Status::InvalidArgument("redact: the map and the output are the same file");
  std::unique_ptr<Reader> r;
  if (Status st = Reader::open(in, r, ReaderOptions{true, true}); !st.ok()) return st;
  if (Status st = r->damage(); !st.ok()) return st;
  for (const std::string& k : opt.keep) map.keep(k);
  Patterns patterns;
  for (const std::string& a : opt.redact) {
    if (Status s = check_redact_pattern(a); !s.ok()) return s;
    if (is_pattern(a))
      patterns.regexes.push_back(compile_pattern(a));
    else
      map.token(a, TokenKind::kRedacted);
  }
  RedactReport report;
  Capture meta = r->metadata();
  seed_identity(meta, map);
  meta.host.name = map.token(meta.host.name, TokenKind::kHost);
  seed_metadata(meta, patterns, map);
  const std::map<uint32_t, std::string> object_names = counter_names(meta, "009");
  RecordContext c{map, object_names, report, patterns, opt};
  bool map_written = false;
  Status st = write_replacing(out, [&](const std::string& tmp) {
    std::unique_ptr<Writer> w;
    Status s = Writer::create(tmp, meta.host, opt.writer, w);
    if (s.ok()) s = redact_records(*r, *w, c);
    if (s.ok()) {
      report.registry_values = redact_registry(meta.registry, map, report, opt.check);
      redact_names(meta, map);
      meta.fingerprint_json = redact_fingerprint(meta.fingerprint_json, map);
      s = add_metadata(*w, meta);
    }
    if (w) {
      const Status closed = w->close();
      if (s.ok()) s = closed;
    }
    // The map goes in place before the capture does; a capture without its map is never left.
    if (s.ok()) s = write_replacing(map_path, [&](const std::string& t) { return write_private(t, map.to_json()); });
    map_written = s.ok();
    return s;
  });
  if (!st.ok()) {
    if (map_written) fs::remove(map_path, ec);  // the capture's rename failed: no map without it
    return st;
  }
  report.in_bytes = r->file_size();
  report.out_bytes = fs::file_size(out, ec);
  if (report_out) *report_out = report;
  return Status::Ok();
}

}  // namespace perfsim::captures
