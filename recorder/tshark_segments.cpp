#include "recorder/tshark_segments.h"

#include <fcntl.h>
#include <fmt/ranges.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

#include "core/subprocess.h"
#include "core/text.h"

namespace perfsim::recorder {
namespace {

// The fields asked of tshark, in this order (one tab-separated line per TCP frame).
const char* const kFields[] = {"frame.number",  "frame.time_epoch", "tcp.stream", "ip.src",      "ipv6.src",
                               "tcp.srcport",   "ip.dst",           "ipv6.dst",   "tcp.dstport", "tcp.seq_raw",
                               "tcp.flags.syn", "tcp.flags.ack",    "tcp.payload"};
constexpr size_t kFieldCount = std::size(kFields);
constexpr size_t kStderrKept = 16 * 1024;  // enough for tshark's messages, bounded against a flood

constexpr int64_t kEpochToFiletimeSeconds = 11644473600;  // 1601-01-01 -> 1970-01-01

bool parse_u64(std::string_view s, uint64_t& v) {
  if (s.empty() || s.size() > 20) return false;
  v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + uint64_t(c - '0');
  }
  return true;
}

bool parse_flag(std::string_view s) { return s == "1" || s == "True" || s == "true"; }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// tshark prints bytes as plain hex; separators (':') are tolerated.
bool parse_hex(std::string_view s, Bytes& out) {
  out.clear();
  out.reserve(s.size() / 2);
  int hi = -1;
  for (char c : s) {
    if (c == ':') continue;
    const int d = hex_digit(c);
    if (d < 0) return false;
    if (hi < 0) {
      hi = d;
    } else {
      out.push_back(uint8_t(hi << 4 | d));
      hi = -1;
    }
  }
  return hi < 0;
}

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> f;
  size_t start = 0;
  for (size_t i = 0; i <= line.size(); ++i)
    if (i == line.size() || line[i] == '\t') {
      f.push_back(line.substr(start, i - start));
      start = i + 1;
    }
  return f;
}

enum class LineResult { kOk, kBadTime, kBad };

// kBadTime: everything but the time stamp parsed; `s` keeps its previous time.
LineResult parse_line(std::string_view line, TcpSegment& s) {
  const std::vector<std::string_view> f = split_tabs(line);
  uint64_t sport = 0, dport = 0, seq = 0;
  if (f.size() != kFieldCount || !parse_u64(f[0], s.frame) || !parse_u64(f[2], s.stream) || !parse_u64(f[5], sport) ||
      !parse_u64(f[8], dport) || !parse_u64(f[9], seq) || sport > 0xffff || dport > 0xffff || seq > 0xffffffff ||
      !parse_hex(f[12], s.payload))
    return LineResult::kBad;
  s.src = std::string(!f[3].empty() ? f[3] : f[4]);
  s.dst = std::string(!f[6].empty() ? f[6] : f[7]);
  s.sport = uint16_t(sport);
  s.dport = uint16_t(dport);
  s.seq = uint32_t(seq);
  s.syn = parse_flag(f[10]);
  s.ack = parse_flag(f[11]);
  int64_t t = 0;
  if (!epoch_text_to_filetime(std::string(f[1]), t)) return LineResult::kBadTime;
  s.time_100ns = t;
  return LineResult::kOk;
}

// The frame number of a line that did not parse, 0 when even that is unreadable.
uint64_t frame_of(std::string_view line) {
  uint64_t n = 0;
  return parse_u64(line.substr(0, line.find('\t')), n) ? n : 0;
}

void note(std::vector<uint64_t>& frames, uint64_t frame) {
  if (frames.size() < UnreadFrames::kListed) frames.push_back(frame);
}

std::string frame_list(const std::vector<uint64_t>& frames, uint64_t total) {
  const std::string s = fmt::format("{}", fmt::join(frames, ", "));
  return total > frames.size() ? s + ", ..." : s;
}

// tshark's stderr without the lines every run as root prints.
std::string tshark_complaint(const std::string& err) {
  std::string out;
  size_t start = 0;
  while (start < err.size()) {
    size_t end = err.find('\n', start);
    if (end == std::string::npos) end = err.size();
    const std::string_view line(err.data() + start, end - start);
    if (!line.empty() && line.find("Running as user") == std::string_view::npos) out.append(line).append("\n");
    start = end + 1;
  }
  return trim(out);
}

}  // namespace

std::string UnreadFrames::describe() const {
  std::string s;
  if (time_replaced)
    s += std::to_string(time_replaced) +
         " frame(s) with an out-of-range time stamp took the previous frame's time (frame " +
         frame_list(time_replaced_frames, time_replaced) + ")";
  if (skipped)
    s += std::string(s.empty() ? "" : "; ") + std::to_string(skipped) +
         " frame(s) tshark printed unreadably were skipped (frame " + frame_list(skipped_frames, skipped) + ")";
  return s;
}

bool epoch_text_to_filetime(const std::string& text, int64_t& out) {
  const size_t dot = text.find('.');
  uint64_t secs = 0;
  if (!parse_u64(std::string_view(text).substr(0, dot), secs) || secs > (uint64_t(1) << 40)) return false;
  uint64_t units = 0;  // 100 ns units within the second: the first 7 fraction digits
  if (dot != std::string::npos) {
    const std::string_view frac = std::string_view(text).substr(dot + 1);
    for (size_t i = 0; i < frac.size(); ++i) {
      if (frac[i] < '0' || frac[i] > '9') return false;
      if (i < 7) units = units * 10 + uint64_t(frac[i] - '0');
    }
    for (size_t i = frac.size(); i < 7; ++i) units *= 10;
  }
  out = (int64_t(secs) + kEpochToFiletimeSeconds) * 10000000 + int64_t(units);
  return true;
}

Status read_tcp_segments(const std::string& path, const TsharkRun& run, const std::function<void(TcpSegment&)>& segment,
                         UnreadFrames* unread) {
  std::vector<std::string> args = {run.tshark, "-n", "-r", path, "-o", "tcp.desegment_tcp_streams:FALSE",
                                   // Only TCP matters; not dissecting above it keeps tshark fast.
                                   "--disable-protocol", "nbss", "--disable-protocol", "smb", "--disable-protocol",
                                   "smb2", "--disable-protocol", "dcerpc", "-Y", "tcp", "-T", "fields", "-E",
                                   "separator=/t", "-E", "occurrence=f"};
  for (const char* f : kFields) {
    args.push_back("-e");
    args.push_back(f);
  }
  subprocess::Options o;
  o.out = subprocess::Stream::kPipe;
  o.err = subprocess::Stream::kPipe;
  subprocess::Child child;
  if (Status st = subprocess::start(args, o, child); !st.ok())
    return Status::IOError(st.message() + " (install the Debian package tshark: scripts/install-deps.sh)");

  const auto deadline = std::chrono::steady_clock::now() + run.timeout;
  std::string pending, err;
  bool timed_out = false;
  pollfd fds[2] = {{child.out_fd, POLLIN, 0}, {child.err_fd, POLLIN, 0}};
  const int err_fd = child.err_fd;
  child.out_fd = child.err_fd = -1;  // the loop below owns and closes them
  int open_fds = 2;
  std::vector<char> buf(1 << 16);
  TcpSegment seg;
  UnreadFrames ignored;
  UnreadFrames& bad = unread ? *unread : ignored;
  const auto take = [&](std::string_view line) {
    const LineResult r = parse_line(line, seg);
    if (r == LineResult::kBad) {
      ++bad.skipped;
      note(bad.skipped_frames, frame_of(line));
      return;
    }
    if (r == LineResult::kBadTime) {
      ++bad.time_replaced;
      note(bad.time_replaced_frames, seg.frame);
    }
    segment(seg);
  };
  while (open_fds > 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    const int n = ::poll(fds, 2, int(std::min<int64_t>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) break;
    for (pollfd& p : fds) {
      if (p.fd < 0 || !(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t got = ::read(p.fd, buf.data(), buf.size());
      if (got <= 0) {
        if (got < 0 && errno == EINTR) continue;
        ::close(p.fd);
        p.fd = -1;
        --open_fds;
        continue;
      }
      if (p.fd == err_fd) {
        err.append(buf.data(),
                   size_t(std::min<ssize_t>(got, ssize_t(kStderrKept - std::min(err.size(), kStderrKept)))));
        continue;
      }
      pending.append(buf.data(), size_t(got));
      size_t start = 0;
      for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
        const std::string_view line(pending.data() + start, nl - start);
        if (!line.empty()) take(line);
      }
      pending.erase(0, start);
    }
  }
  for (pollfd& p : fds)
    if (p.fd >= 0) ::close(p.fd);
  if (!timed_out && !pending.empty()) take(pending);  // a last line without its newline
  const subprocess::ExitStatus st =
      timed_out ? subprocess::stop(child, std::chrono::milliseconds(0), false, SIGKILL) : subprocess::wait(child);
  if (timed_out)
    return Status::IOError("tshark did not finish reading " + path + " within " + std::to_string(run.timeout.count()) +
                           " s; stopped it");
  if (st.code != 0) {
    const std::string said = tshark_complaint(err);
    return Status::IOError("tshark " +
                           std::string(st.code > 0 ? "exited with status " + std::to_string(st.code)
                                                   : "was killed by signal " + std::to_string(st.signal)) +
                           " reading " + path + (said.empty() ? std::string() : ": " + said));
  }
  return Status::Ok();
}

}  // namespace perfsim::recorder
