#include "samba_bridge.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace perfsim::test {
namespace {

std::string temp_path(const char* suffix) {
  static int counter = 0;
  auto p = std::filesystem::temp_directory_path() /
           ("perfsim-ndr-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + suffix);
  return p.string();
}

void write_file(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary).write(data.data(), std::streamsize(data.size()));
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void run(const std::string& args) {
  std::string cmd = std::string(PERFSIM_PYTHON) + " " + SAMBA_NDR_SCRIPT + " " + args;
  INFO("command: " << cmd);
  REQUIRE(std::system(cmd.c_str()) == 0);
}

std::string as_string(const Bytes& b) { return std::string(b.begin(), b.end()); }

Bytes pack(const char* command, const std::string& op, const json& spec) {
  std::string in = temp_path(".json"), out = temp_path(".bin");
  write_file(in, spec.dump());
  run(std::string(command) + " " + op + " " + in + " " + out);
  std::string blob = read_file(out);
  std::remove(in.c_str());
  std::remove(out.c_str());
  return Bytes(blob.begin(), blob.end());
}

}  // namespace

json samba_unpack_out(const std::string& op, const Bytes& blob, const json& preset) {
  std::string bin = temp_path(".bin"), pre = temp_path(".json"), out = temp_path(".json");
  write_file(bin, as_string(blob));
  write_file(pre, preset.dump());
  run("unpack-out " + op + " " + bin + " " + pre + " " + out);
  json j = json::parse(read_file(out));
  for (const std::string& p : {bin, pre, out}) std::remove(p.c_str());
  return j;
}

json samba_unpack_in(const std::string& op, const Bytes& blob) {
  std::string bin = temp_path(".bin"), out = temp_path(".json");
  write_file(bin, as_string(blob));
  run("unpack-in " + op + " " + bin + " " + out);
  json j = json::parse(read_file(out));
  std::remove(bin.c_str());
  std::remove(out.c_str());
  return j;
}

Bytes samba_pack_in(const std::string& op, const json& spec) { return pack("pack-in", op, spec); }
Bytes samba_pack_out(const std::string& op, const json& spec) { return pack("pack-out", op, spec); }

std::string guid_text(const winreg::PolicyHandle& h) {
  const auto& u = h.uuid;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[3], u[2],
                u[1], u[0], u[5], u[4], u[7], u[6], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  return buf;
}

json handle_spec(const winreg::PolicyHandle& h) {
  return {{"__type", "misc.policy_handle"}, {"handle_type", h.attributes}, {"uuid", {{"__guid", guid_text(h)}}}};
}

json string_spec(const char* text) {
  return {{"__type", "winreg.String"}, {"name", text ? json(text) : json(nullptr)}};
}

json strbuf_spec(const char* type, const char* text, int size) {
  return {{"__type", std::string("winreg.") + type}, {"name", text ? json(text) : json(nullptr)}, {"size", size}};
}

std::u16string u16(const char* ascii) { return std::u16string(ascii, ascii + std::char_traits<char>::length(ascii)); }

}  // namespace perfsim::test
