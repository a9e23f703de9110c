// Plumbing for the interop tests: running a client script with a time limit, recording one
// loopback TCP port with dumpcap, judging the recording with tshark, and finding the capture to
// serve. Every wait here is bounded; nothing listens or captures beyond 127.0.0.1 and the ports
// the test itself opened.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "captures/capture.h"
#include "core/status.h"
#include "core/subprocess.h"

namespace perfsim::interop {

struct CommandResult {
  int exit_status = -1;  // -1: did not run or was killed by a signal
  std::string output;    // stdout and stderr, interleaved
};
// Runs `command` through /bin/sh. The command bounds its own time (prefix it with `timeout`).
CommandResult run_command(const std::string& command);
// Connects to 127.0.0.1:port, sends `data` (may be empty) and closes; the source port it used
// (0 when no socket was made).
uint16_t send_and_close(uint16_t port, const std::string& data);
// Single-quotes `s` for /bin/sh.
std::string shell_quote(const std::string& s);
// Whether `needle` occurs in `haystack` (std::string::contains is C++23).
bool contains(const std::string& haystack, const std::string& needle);

// dumpcap recording TCP port `port` (or several) on the loopback interface into a pcapng file.
class PacketRecorder {
 public:
  PacketRecorder() = default;
  ~PacketRecorder() { stop(); }
  PacketRecorder(const PacketRecorder&) = delete;
  PacketRecorder& operator=(const PacketRecorder&) = delete;

  // Returns once dumpcap provably captures the port: its file header is written and a probe
  // connection to the port shows up in the file (within 10 s, or an error saying why not).
  Status start(uint16_t port, const std::string& file) { return start(std::vector<uint16_t>{port}, file); }
  // Every port in `ports` (each one probed the same way).
  Status start(const std::vector<uint16_t>& ports, const std::string& file);
  // Lets the last packets reach the file, then stops dumpcap with SIGINT (SIGKILL after 10 s).
  void stop();
  const std::string& log() const { return log_; }  // dumpcap's stderr

 private:
  subprocess::Child child_;
  std::string file_, log_file_, log_;
  std::vector<uint16_t> ports_;  // start()'s, probed again at stop()
};

// What tshark made of a recording of one DCE/RPC session.
struct WireReport {
  size_t frames = 0;                  // all frames
  size_t payload_frames = 0;          // frames carrying TCP payload
  size_t winreg_frames = 0;           // frames tshark decoded as WINREG calls
  size_t retransmissions = 0;         // TCP segments sent again (not judged: their bytes were, the first time)
  std::set<unsigned> opnums;          // winreg opnums seen in requests
  std::vector<std::string> problems;  // one line each; empty when the recording is clean
  std::string table;                  // tshark's per-frame fields, for diagnostics
};
// Decodes `pcap` with `-d tcp.port==port,dcerpc` and checks that every frame with TCP payload is
// DCE/RPC (or a segment tshark reassembles into one, or a TCP retransmission), that requests and responses decode as
// WINREG (or are fragments reassembled into one), and that no frame is malformed or carries
// expert info of severity error, or warning outside TCP's flow analysis (zero window, RST and
// retransmissions depend on the machine's load, not on our PDUs).
// `op_field` names the interface whose calls requests and responses must decode as
// (e.g. "epm.opnum" for the endpoint mapper); WireReport's winreg_frames then counts those.
// `tshark_options` go on tshark's command line as they are (e.g. "-o ntlmssp.nt_password:PW" to
// decrypt sealed stubs).
WireReport check_wire(const std::string& pcap, uint16_t port, const std::string& op_field = "winreg.opnum",
                      const std::string& tshark_options = "");

// The capture the interop tests serve: the bundled captures/default-2016.perfcap (made by the
// synth, scripts/make-bundled-captures.sh). `path` names it; a missing file is NotFound.
Status load_capture(captures::Capture& cap, std::string& path);

}  // namespace perfsim::interop
