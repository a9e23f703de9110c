#include "journal/event.h"

#include <fmt/core.h>

#include <ctime>
#include <filesystem>
#include <fstream>

#include "core/json.h"
#include "windows/constants.h"
#include "winreg/codec.h"

namespace perfsim::journal {
namespace {

std::string iso_time(int64_t time_us) {
  const time_t secs = time_t(time_us / 1000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, (time_us / 1000) % 1000);
}

SharedText shared(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return nullptr;
  return std::make_shared<const std::string>(j[key].get<std::string>());
}

// A JSON string literal of `s` (UTF-8 passed through; quotes, backslashes and controls escaped).
void append_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    const auto u = uint8_t(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      out += fmt::format("\\u{:04x}", u);
    } else {
      out += c;
    }
  }
  out += '"';
}

constexpr const char* kClosedName = "no answer (connection closed)";

std::string status_name(const CallEvent& e) { return e.closed ? kClosedName : windows::werror_name(e.status); }

}  // namespace

std::string host_event_kind(const CallEvent& e) {
  if (!e.is_host_event()) return {};
  const nlohmann::json j = parse_json_or_discarded(e.host_event);
  return j.is_object() && j.contains("kind") && j["kind"].is_string() ? j["kind"].get<std::string>() : std::string();
}

void append_json_line(const CallEvent& e, std::string& out) {
  if (e.is_host_event()) {  // rare: the plain way
    out += to_json(e).dump();
    return;
  }
  // Keys in nlohmann's (sorted) order, so a line reads the same whichever way it was written.
  out += "{\"applied\":[";
  for (size_t b = 0, first = 1; b < e.applied.size(); first = 0) {
    const size_t c = std::min(e.applied.find(',', b), e.applied.size());
    if (!first) out += ',';
    append_string(out, std::string_view(e.applied).substr(b, c - b));
    b = c + 1;
  }
  out += fmt::format("],\"buffer\":{},\"bytes\":{},\"closed\":{},\"host\":", e.has_buffer, e.bytes, e.closed);
  append_string(out, text(e.host));
  out += ",\"key\":";
  if (e.key_path)
    append_string(out, *e.key_path);
  else
    out += "null";
  out += fmt::format(",\"latency_us\":{},\"offered\":{},\"op\":", e.latency_us, e.offered);
  append_string(out, opnum_label(e.opnum));
  out += fmt::format(",\"opnum\":{},\"peer\":", e.opnum);
  append_string(out, text(e.peer));
  out +=
      fmt::format(",\"rpc_fault\":{},\"seq\":{},\"session\":{},\"size\":{},\"status\":{},\"status_name\":", e.rpc_fault,
                  e.seq, e.session, e.size, e.status);
  append_string(out, status_name(e));
  out += ",\"time\":";
  append_string(out, iso_time(e.time_us));
  out += fmt::format(",\"time_us\":{},\"transport\":\"{}\",\"type\":{},\"value\":", e.time_us,
                     transport_name(e.transport), e.type);
  append_string(out, e.value_name);
  out += '}';
}

const char* transport_name(Transport t) { return t == Transport::kSmb ? "smb" : "tcp"; }

const std::string& text(const SharedText& t) {
  static const std::string empty;
  return t ? *t : empty;
}

std::string opnum_label(uint16_t opnum) {
  const char* n = winreg::opnum_name(opnum);
  return n ? std::string(n) : fmt::format("opnum 0x{:02x}", opnum);
}

nlohmann::json to_json(const CallEvent& e) {
  if (e.is_host_event())
    return {{"entry", "event"},
            {"event", parse_json_or_discarded(e.host_event)},
            {"host", text(e.host)},
            {"seq", e.seq},
            {"time", iso_time(e.time_us)},
            {"time_us", e.time_us}};
  nlohmann::json applied = nlohmann::json::array();
  for (size_t b = 0; b < e.applied.size();) {
    const size_t c = std::min(e.applied.find(',', b), e.applied.size());
    applied.push_back(e.applied.substr(b, c - b));
    b = c + 1;
  }
  return {{"seq", e.seq},
          {"time", iso_time(e.time_us)},
          {"time_us", e.time_us},
          {"host", text(e.host)},
          {"peer", text(e.peer)},
          {"transport", transport_name(e.transport)},
          {"session", e.session},
          {"opnum", e.opnum},
          {"op", opnum_label(e.opnum)},
          {"value", e.value_name},
          {"key", e.key_path ? nlohmann::json(*e.key_path) : nlohmann::json()},
          {"buffer", e.has_buffer},
          {"offered", e.offered},
          {"status", e.status},
          {"status_name", status_name(e)},
          {"type", e.type},
          {"size", e.size},
          {"bytes", e.bytes},
          {"rpc_fault", e.rpc_fault},
          {"latency_us", e.latency_us},
          {"applied", applied},
          {"closed", e.closed}};
}

namespace {

// {"entry":"event","event":{"kind":...},"host":H,"seq":N,"time_us":T}
Status host_event_from_json(const nlohmann::json& j, const std::string& where, CallEvent& e) {
  if (j["entry"] != "event")
    return Status::InvalidArgument(where + ": \"entry\" must be \"event\" (a call's line has no \"entry\")");
  for (const char* k : {"seq", "time_us"})
    if (!j.contains(k) || !j[k].is_number_integer())
      return Status::InvalidArgument(fmt::format("{}: field \"{}\" missing or not an integer", where, k));
  if (!j.contains("host") || !j["host"].is_string())
    return Status::InvalidArgument(where + ": field \"host\" missing or not a string");
  if (!j.contains("event") || !j["event"].is_object() || !j["event"].contains("kind") ||
      !j["event"]["kind"].is_string())
    return Status::InvalidArgument(where + ": field \"event\" missing or not an object with a \"kind\"");
  e = CallEvent{};
  e.seq = j["seq"].get<uint64_t>();
  e.time_us = j["time_us"].get<int64_t>();
  e.host = shared(j, "host");
  e.host_event = j["event"].dump();
  return Status::Ok();
}

}  // namespace

Status from_json(const nlohmann::json& j, const std::string& where, CallEvent& e) {
  if (!j.is_object()) return Status::InvalidArgument(where + ": expected a JSON object (one event per line)");
  if (j.contains("entry")) return host_event_from_json(j, where, e);
  // Every field a diagnosis reads is required, with its type: a wrong file fails here, not later.
  for (const char* k : {"seq", "time_us", "session", "opnum", "offered", "status", "size", "bytes", "latency_us"})
    if (!j.contains(k) || !j[k].is_number_integer())
      return Status::InvalidArgument(fmt::format("{}: field \"{}\" missing or not an integer", where, k));
  for (const char* k : {"host", "peer", "transport", "value"})
    if (!j.contains(k) || !j[k].is_string())
      return Status::InvalidArgument(fmt::format("{}: field \"{}\" missing or not a string", where, k));
  // Optional fields have their types too: nlohmann's value() throws on a mismatch, and one damaged
  // line must be a line skipped, not an abort.
  for (const char* k : {"type", "rpc_fault"})
    if (j.contains(k) && !j[k].is_number_integer())
      return Status::InvalidArgument(fmt::format("{}: field \"{}\" not an integer", where, k));
  for (const char* k : {"buffer", "closed"})
    if (j.contains(k) && !j[k].is_boolean())
      return Status::InvalidArgument(fmt::format("{}: field \"{}\" not true or false", where, k));
  e = CallEvent{};
  e.seq = j["seq"].get<uint64_t>();
  e.time_us = j["time_us"].get<int64_t>();
  e.host = shared(j, "host");
  e.peer = shared(j, "peer");
  const std::string t = j["transport"].get<std::string>();
  if (t != "tcp" && t != "smb")
    return Status::InvalidArgument(where + ": transport \"" + t + "\" is neither \"tcp\" nor \"smb\"");
  e.transport = t == "smb" ? Transport::kSmb : Transport::kTcp;
  e.session = j["session"].get<uint64_t>();
  e.opnum = j["opnum"].get<uint16_t>();
  e.value_name = j["value"].get<std::string>();
  if (j.contains("key") && j["key"].is_string()) e.key_path = shared(j, "key");
  e.has_buffer = j.value("buffer", false);
  e.offered = j["offered"].get<uint32_t>();
  e.status = j["status"].get<uint32_t>();
  e.type = j.value("type", 0u);
  e.size = j["size"].get<uint32_t>();
  e.bytes = j["bytes"].get<uint32_t>();
  e.rpc_fault = j.value("rpc_fault", 0u);
  e.latency_us = j["latency_us"].get<uint32_t>();
  e.closed = j.value("closed", false);
  if (j.contains("applied") && j["applied"].is_array())
    for (const auto& a : j["applied"]) {
      if (!a.is_string()) return Status::InvalidArgument(where + ": \"applied\" must hold strings");
      if (!e.applied.empty()) e.applied += ',';
      e.applied += a.get<std::string>();
    }
  return Status::Ok();
}

namespace {

// One non-blank line: an event appended to `out`, or a dropped-events marker added to `report`.
Status read_line(const std::string& line, const std::string& where, std::vector<CallEvent>& out, JournalRead& report) {
  nlohmann::json j;
  if (const JsonRead r = parse_json_text(line, j); r == JsonRead::kTooDeep)
    return Status::Corruption(json_read_error(line, where, r));
  if (j.is_discarded()) return Status::Corruption(where + ": not JSON (expected one event object per line)");
  if (j.is_object() && j.contains("journal")) {
    if (j["journal"] != "dropped" || !j.contains("events") || !j["events"].is_number_unsigned())
      return Status::Corruption(where + ": a journal marker other than {\"journal\":\"dropped\",\"events\":N}");
    report.dropped += j["events"].get<uint64_t>();
    return Status::Ok();
  }
  CallEvent e;
  if (Status s = from_json(j, where, e); !s.ok()) return s;
  out.push_back(std::move(e));
  return Status::Ok();
}

Status read_one(const std::string& path, bool strict, std::vector<CallEvent>& out, JournalRead& report) {
  std::ifstream in(path);
  if (!in) return Status::IOError(path + ": cannot open (is it the file given to perfsim serve --journal?)");
  report.files.push_back(path);
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const Status s = read_line(line, fmt::format("{}:{}", path, n), out, report);
    if (s.ok()) continue;
    if (strict) return s;
    if (report.first_skipped.size() < JournalRead::kNotedSkips) report.first_skipped.push_back(s.message());
    ++report.skipped;
  }
  return Status::Ok();
}

}  // namespace

Status read_journal_file(const std::string& path, std::vector<CallEvent>& out) {
  JournalRead report;
  return read_one(path, /*strict=*/true, out, report);
}

std::string rotated_name(const std::string& path, uint32_t k) { return k == 0 ? path : path + "." + std::to_string(k); }

std::vector<std::string> journal_set(const std::string& path) {
  uint32_t k = 1;
  while (k < 100000 && std::filesystem::is_regular_file(rotated_name(path, k))) ++k;
  std::vector<std::string> files;
  while (--k >= 1) files.push_back(rotated_name(path, k));
  files.push_back(path);
  return files;
}

Status read_journal(const std::vector<std::string>& files, bool strict, std::vector<CallEvent>& out,
                    JournalRead& report) {
  for (const std::string& f : files)
    if (Status s = read_one(f, strict, out, report); !s.ok()) return s;
  return Status::Ok();
}

}  // namespace perfsim::journal
