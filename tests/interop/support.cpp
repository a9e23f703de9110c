#include "support.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "captures/reader.h"
#include "core/bytes.h"
#include "core/subprocess.h"

namespace perfsim::interop {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

uintmax_t file_size_or_zero(const std::string& path) {
  std::error_code ec;
  const uintmax_t n = fs::file_size(path, ec);
  return ec ? 0 : n;
}

// Polls `ready` every 20 ms for at most `limit`.
template <class Pred>
bool wait_until(Pred ready, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!ready()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  if (!s.empty() && s.back() == sep) out.push_back("");
  return out;
}

// Wireshark's expert severities and the TCP flow group (epan/proto.h PI_WARN, PI_ERROR, PI_SEQUENCE).
constexpr unsigned long kSeverityWarn = 0x00600000, kSeverityError = 0x00800000, kGroupSequence = 0x02000000;

}  // namespace

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Reads the pcapng blocks dumpcap has completed past `offset` (moved to the end of the last whole
// one) and says whether one is a TCP SYN from `sport` to `dport` (pcapng: block type and total
// length; an Enhanced Packet Block (6) holds its packet 28 bytes in; lo's packets are Ethernet).
bool pcapng_has_syn(const std::string& file, uint16_t sport, uint16_t dport, uintmax_t& offset) {
  std::ifstream f(file, std::ios::binary);
  f.seekg(std::streamoff(offset));
  const std::string tail{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  auto u32 = [&](size_t at) { return load_le32(reinterpret_cast<const uint8_t*>(tail.data() + at)); };
  auto u16be = [&](size_t at) { return uint16_t(uint8_t(tail[at]) << 8 | uint8_t(tail[at + 1])); };
  bool found = false;
  size_t at = 0;
  while (at + 12 <= tail.size()) {
    const uint32_t type = u32(at), length = u32(at + 4);
    if (length < 12 || at + length > tail.size()) break;
    const size_t packet = at + 28, caplen = length >= 32 ? u32(at + 20) : 0;
    if (type == 6 && caplen >= 34 && packet + caplen <= at + length && u16be(packet + 12) == 0x0800 &&
        uint8_t(tail[packet + 14 + 9]) == 6) {
      const size_t tcp = packet + 14 + (uint8_t(tail[packet + 14]) & 0x0f) * 4;
      if (tcp + 14 <= packet + caplen && u16be(tcp) == sport && u16be(tcp + 2) == dport &&
          (uint8_t(tail[tcp + 13]) & 0x12) == 0x02)
        found = true;
    }
    at += length;
  }
  offset += at;
  return found;
}

uint16_t send_and_close(uint16_t port, const std::string& data) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // Bound first, so the source port is known before the SYN leaves (PacketRecorder::stop looks for it).
  socklen_t len = sizeof a;
  uint16_t source = 0;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    source = ntohs(a.sin_port);
  a.sin_port = htons(port);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0 && !data.empty())
    (void)::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
  ::close(fd);
  return source;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Through sh -c, as popen did: callers use pipes and redirections.
CommandResult run_command(const std::string& command) {
  CommandResult r;
  subprocess::ExitStatus st;
  if (Status s = subprocess::run({"/bin/sh", "-c", command}, "", r.output, st); !s.ok()) {
    r.output = s.message();
    return r;
  }
  r.exit_status = st.code;
  return r;
}

Status PacketRecorder::start(const std::vector<uint16_t>& ports, const std::string& file) {
  file_ = file;
  ports_ = ports;
  log_file_ = file + ".dumpcap.log";
  std::string filter;
  for (uint16_t port : ports) filter += (filter.empty() ? "tcp port " : " or tcp port ") + std::to_string(port);
  std::vector<std::string> args = {"dumpcap", "-i", "lo", "-f", filter, "-w", file, "-q"};
  fs::remove(log_file_);  // the log is this run's only
  // So is the file: an earlier recording's would pass for the header and hide the probe's growth.
  fs::remove(file);
  subprocess::Options o;
  o.out = subprocess::Stream::kFile;
  o.out_path = log_file_;
  o.err = subprocess::Stream::kStdout;
  o.parent_death_signal = SIGINT;  // a crashed test must not leave dumpcap behind
  if (Status st = subprocess::start(args, o, child_); !st.ok()) return st;

  subprocess::ExitStatus gone;
  auto failed = [&](const std::string& why) {
    stop();
    log_ = read_text(log_file_);  // also when dumpcap already exited (and stop() had nothing to do)
    return Status::IOError(why + "; dumpcap said: " + log_);
  };
  // The file header is written once the interface is open and the filter compiled.
  if (!wait_until([&] { return file_size_or_zero(file) > 0 || subprocess::poll(child_, gone); }, 10s) ||
      file_size_or_zero(file) == 0)
    return failed("dumpcap did not start capturing on lo within 10 s (needs root or the wireshark group)");
  // Proof that packets of each port reach the file: a probe connection makes it grow.
  for (uint16_t port : ports) {
    const uintmax_t before = file_size_or_zero(file);
    bool seen = false;
    for (int i = 0; i < 20 && !seen; ++i) {
      send_and_close(port, "");
      seen = wait_until([&] { return file_size_or_zero(file) > before; }, 500ms);
    }
    if (!seen)
      return failed("dumpcap wrote no packet of a probe connection to port " + std::to_string(port) + " within 10 s");
  }
  return Status::Ok();
}

void PacketRecorder::stop() {
  if (child_.pid <= 0) return;
  // Everything the test sent is in the file once a probe sent after it is (dumpcap reads lo in
  // order, and SIGINT stops it reading): the probe's own SYN, found in the file, with a deadline. A
  // wait for the size to stop changing, and then one for it to grow at all, raced a loaded
  // machine's dumpcap still writing its backlog (issue 55: a sealed SMB session cut short).
  // Another probe each second keeps dumpcap's writes going.
  if (!ports_.empty()) {
    uintmax_t offset = 0;
    bool seen = false;
    for (int i = 0; i < 10 && !seen; ++i) {
      const uint16_t source = send_and_close(ports_.front(), "");
      seen = source != 0 && wait_until([&] { return pcapng_has_syn(file_, source, ports_.front(), offset); }, 1s);
    }
  }
  subprocess::stop(child_, 10s, /*group=*/false, SIGINT);  // SIGINT: dumpcap finishes its file
  log_ = read_text(log_file_);
}

WireReport check_wire(const std::string& pcap, uint16_t port, const std::string& op_field,
                      const std::string& tshark_options) {
  WireReport w;
  const std::string fields[] = {"frame.number",
                                "tcp.len",
                                "frame.protocols",
                                "dcerpc.pkt_type",
                                op_field,
                                "tcp.reassembled_in",
                                "dcerpc.reassembled_in",
                                "_ws.expert.severity",
                                "_ws.expert.message",
                                "_ws.malformed",
                                "_ws.expert.group",
                                "tcp.analysis.retransmission",
                                "tcp.analysis.fast_retransmission"};
  std::string cmd = "(timeout 120 tshark -2 -n -r " + shell_quote(pcap) + " -d tcp.port==" + std::to_string(port) +
                    ",dcerpc " + tshark_options + " -T fields -E separator=/t -E occurrence=a -E aggregator=,";
  for (const std::string& f : fields) cmd += " -e " + f;
  cmd += " 2>" + shell_quote(pcap + ".tshark.err") + ")";
  const CommandResult r = run_command(cmd);
  w.table = r.output;
  if (r.exit_status != 0) {
    w.problems.push_back("tshark exited with " + std::to_string(r.exit_status) + ": " +
                         read_text(pcap + ".tshark.err"));
    return w;
  }
  for (const std::string& line : split(r.output, '\n')) {
    if (line.empty()) continue;
    std::vector<std::string> f = split(line, '\t');
    f.resize(std::size(fields));
    ++w.frames;
    const std::string& frame = f[0];
    const std::string& protocols = f[2];
    const bool payload = !f[1].empty() && f[1] != "0";
    const bool dcerpc = contains(protocols, ":dcerpc");
    // Sub-dissectors of DCE/RPC do not show in frame.protocols; a WINREG field does.
    const bool winreg = !f[4].empty();
    // The kernel may resend a segment (tail loss probe on a busy machine); tshark does not
    // dissect resent bytes again, and they were judged in their first transmission.
    const bool resent = !f[11].empty() || !f[12].empty();
    if (payload) ++w.payload_frames;
    if (winreg) ++w.winreg_frames;
    if (resent) ++w.retransmissions;
    if (payload && !dcerpc && f[5].empty() && !resent)
      w.problems.push_back("frame " + frame + ": TCP payload not decoded as DCE/RPC (" + protocols + ")");
    // A request (0) or response (2) must decode as WINREG, unless it is a fragment reassembled later.
    for (const std::string& t : split(f[3], ','))
      if ((t == "0" || t == "2") && !winreg && f[6].empty())
        w.problems.push_back("frame " + frame + ": DCE/RPC " + (t == "0" ? "request" : "response") +
                             " not decoded as " + op_field + " (" + protocols + ")");
    if (winreg)
      for (const std::string& op : split(f[4], ','))
        if (!op.empty()) w.opnums.insert(unsigned(std::stoul(op)));
    if (contains(protocols, "_ws.malformed") || !f[9].empty())
      w.problems.push_back("frame " + frame + ": malformed packet (" + protocols + ")");
    const std::vector<std::string> severities = split(f[7], ','), messages = split(f[8], ','),
                                   groups = split(f[10], ',');
    for (size_t i = 0; i < severities.size(); ++i) {
      if (severities[i].empty()) continue;
      const unsigned long sev = std::stoul(severities[i], nullptr, 0);
      // TCP flow warnings (zero window, retransmission) say nothing about our PDUs: not judged.
      const bool tcp_flow =
          i < groups.size() && !groups[i].empty() && std::stoul(groups[i], nullptr, 0) == kGroupSequence;
      if (sev >= kSeverityError || (sev >= kSeverityWarn && !tcp_flow))
        w.problems.push_back("frame " + frame + ": expert info " + (sev >= kSeverityError ? "error" : "warning") +
                             ": " + (i < messages.size() ? messages[i] : std::string("?")));
    }
  }
  if (w.frames == 0) w.problems.push_back("the recording holds no frame");
  return w;
}

Status load_capture(captures::Capture& cap, std::string& path) {
  path = std::string(PERFSIM_SOURCE_DIR) + "/captures/default-2016.perfcap";
  if (!fs::exists(path)) return Status::NotFound(path + " is missing (scripts/make-bundled-captures.sh makes it)");
  return captures::read_capture(path, cap);
}

}  // namespace perfsim::interop
