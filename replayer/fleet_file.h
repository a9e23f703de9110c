// The hosts a serve run replays, as a fleet file and the command line describe them: each
// [[host]]'s listen address, capture, timeline, OS profile, explicit quirks, pace and fleet
// expansion (README.md, "Fleet file"). Read with core/config.h: unknown keys and wrongly typed
// values are errors naming the file, line and key.
// Quirk order of a host: defaults, then the capture's fingerprint, then the named profile, then
// the host's [host.quirks]: later wins, quirk by quirk (serve_hosts.h applies it).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/status.h"
#include "replayer/host.h"

namespace perfsim::replayer {

struct HostReplay {
  std::string profile;               // empty: the command line's --profile, if any
  std::vector<QuirkSetting> quirks;  // [host.quirks]: name = true/false or { param = value }
  std::optional<double> speed;       // realtime pace
  std::optional<bool> loop;          // realtime: loop (default) or stop at the end
  std::optional<Between> between;    // realtime: counters between samples (default interpolate)
  std::vector<HostEvent> events;     // [[host.event]]: events on the timeline (events.h)
  uint32_t count = 1;                // fleet: hosts made from this entry
  std::string name;                  // fleet: name pattern ("WEB-{n}"); empty: capture's name
  double clock_spread_s = 0;
  double variation = 0;
  uint64_t seed = 1;
  std::string key() const;  // equal keys share hosts
};

// One [[host]] of a fleet file (or one --listen).
struct FleetHost {
  std::string listen;    // ADDR:PORT
  std::string capture;   // a relative path in a fleet file is resolved against the file's folder
  std::string timeline;  // empty: the command line's
  HostReplay replay;
  uint32_t fleet_index = 0;            // which member of a count = N entry
  std::vector<std::string> smb_allow;  // accounts allowed OpenHKPD over SMB (empty: all)
  std::string smb_dialects;            // "MIN-MAX"; empty: from the capture's OS profile
  // addresses = "127.1.0.0/16": member k listens on the range's (k+1)-th address (the network
  // address itself is skipped), all on `listen`'s port; 0 = ports step as before.
  uint32_t first_address = 0;  // host order; 0: no range
};

// Reads the replay keys of the [[host]] table at `path` ("host[0]"); the caller checks its keys.
Status read_host_replay(const config::Reader& r, const config::Json& host, const std::string& path, HostReplay& out);
// A fleet file's [[host]] tables (TOML, or JSON by extension), with relative captures resolved.
Status read_fleet(const std::string& path, std::vector<FleetHost>& out);
Status parse_fleet(const config::Doc& doc, std::vector<FleetHost>& out);
// Each count = N entry becomes N hosts on consecutive ports (port 0 stays 0), or on consecutive
// addresses of its `addresses` range, in place: entry by entry, members in order.
void expand_fleet(std::vector<FleetHost>& hosts);
// The listen address of fleet member `index`: the port plus index (port 0 stays 0).
std::string fleet_listen(const std::string& listen, uint32_t index);

// "A.B.C.D/P" -> the first host address (the given one, or the one after a network address) and
// how many addresses the range holds from there (the broadcast address excluded for P < 31).
Status parse_address_range(const std::string& cidr, uint32_t& first, uint32_t& capacity);
std::string ipv4_text(uint32_t host_order);

// Shard `k` of `n` (0 <= k < n) of an expanded host list: the k-th of n contiguous blocks (sizes
// differ by one at most), so each host lands on exactly one shard with the same name, address and
// data it has in the whole fleet, and a shard's addresses are one range (one route to its machine).
void keep_shard(std::vector<FleetHost>& hosts, uint32_t k, uint32_t n);
// "K/N" -> k, n; InvalidArgument says the form and range.
Status parse_shard(const std::string& text, uint32_t& k, uint32_t& n);

// A quirk given as text: NAME[=on|off][:PARAM=VALUE,...]; a list value goes on after commas
// (provider-timeout:provider=PerfDisk,PerfNet, as the admin API shows it). InvalidArgument says what is wrong
// (unknown quirk or parameter, bad value) in the terms of README.md.
Status parse_quirk_arg(const std::string& text, QuirkSetting& out);
// realtime | step | frozen:K (K a sample number).
Status parse_timeline(const std::string& text, HostOptions& opt);
// "step" or "interpolate" (--between, a fleet or scenario host's `between`).
Status parse_between(const std::string& text, Between& out);

}  // namespace perfsim::replayer
