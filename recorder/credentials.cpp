#include "recorder/credentials.h"

#include "core/file.h"
#include "core/text.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>

namespace perfsim::recorder {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

void fill(std::optional<std::string>& field, const std::optional<std::string>& from) {
  if (!field && from) field = from;
}

Status read_auth_file(const std::string& path, CredentialFields& out) {
  std::string text;
  if (Status s = read_bounded_file(path, "authentication file", text); !s.ok()) return s;
  return parse_auth_file(text, path, out);
}

}  // namespace

std::string Credentials::describe() const {
  if (anonymous) return "anonymous";
  std::string s = domain.empty() ? user : domain + "\\" + user;
  if (kerberos == Kerberos::kOff) s += " (NTLM only)";
  if (kerberos == Kerberos::kRequired) s += " (Kerberos required)";
  return s;
}

EnvLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
}

void split_domain_user(const std::string& text, std::string& domain, std::string& user) {
  const size_t sep = text.find_first_of("\\/");
  if (sep == std::string::npos) {
    user = text;
    return;
  }
  domain = text.substr(0, sep);
  user = text.substr(sep + 1);
}

Status parse_kerberos(const std::string& text, Credentials::Kerberos& out) {
  const std::string t = lower(text);
  if (t == "auto")
    out = Credentials::Kerberos::kAuto;
  else if (t == "off")
    out = Credentials::Kerberos::kOff;
  else if (t == "required")
    out = Credentials::Kerberos::kRequired;
  else
    return Status::InvalidArgument("Kerberos must be auto, off or required, not '" + text + "'");
  return Status::Ok();
}

Status parse_auth_file(const std::string& text, const std::string& origin, CredentialFields& out) {
  size_t line_no = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();  // files written on Windows
    const std::string where = origin + ", line " + std::to_string(line_no);
    const std::string bare = trim(line);
    if (bare.empty() || bare[0] == '#' || bare[0] == ';') continue;
    const size_t eq = line.find('=');
    if (eq == std::string::npos) return Status::InvalidArgument(where + ": expected 'key = value'");
    const std::string key = lower(trim(line.substr(0, eq)));
    // As Samba does: leading blanks of the value go, trailing ones stay (they may be the password's).
    std::string value = line.substr(eq + 1);
    value.erase(0, std::min(value.size(), value.find_first_not_of(" \t")));
    if (key == "username") {
      std::string domain, user;
      split_domain_user(value, domain, user);
      out.user = user;
      if (!domain.empty()) out.domain = domain;
    } else if (key == "password") {
      out.password = value;
    } else if (key == "domain") {
      out.domain = value;
    } else if (key == "realm") {
      out.realm = value;
    } else {
      return Status::InvalidArgument(where + ": unknown key '" + key +
                                     "' (an authentication file knows username, password, domain and realm)");
    }
  }
  return Status::Ok();
}

Status resolve_credentials(const CredentialOptions& options, const EnvLookup& env, Credentials& out) {
  out = Credentials{};
  out.kerberos = options.kerberos.value_or(Credentials::Kerberos::kAuto);
  if (options.anonymous) {
    out.anonymous = true;
    return Status::Ok();
  }
  CredentialFields merged;
  if (options.user) {
    std::string domain, user;
    split_domain_user(*options.user, domain, user);
    merged.user = user;
    if (!domain.empty()) merged.domain = domain;
  }
  fill(merged.domain, options.domain);
  fill(merged.password, options.password);

  const std::optional<std::string> file = options.auth_file ? options.auth_file : env("PERFSIM_AUTH_FILE");
  if (file) {
    CredentialFields from_file;
    if (Status s = read_auth_file(*file, from_file); !s.ok()) return s;
    fill(merged.user, from_file.user);
    fill(merged.domain, from_file.domain);
    fill(merged.realm, from_file.realm);
    fill(merged.password, from_file.password);
  }
  if (std::optional<std::string> u = env("PERFSIM_USER"); u && !merged.user) {
    std::string domain, user;
    split_domain_user(*u, domain, user);
    merged.user = user;
    if (!domain.empty()) fill(merged.domain, domain);
  }
  fill(merged.domain, env("PERFSIM_DOMAIN"));
  fill(merged.password, env("PERFSIM_PASSWORD"));

  if (!merged.user || merged.user->empty()) {
    if (merged.password || merged.domain)
      return Status::InvalidArgument(
          "a password or domain was given but no user name (--user, username = in the "
          "authentication file, or PERFSIM_USER); use --anonymous for an anonymous logon");
    out.anonymous = true;
    return Status::Ok();
  }
  out.user = *merged.user;
  out.domain = merged.domain.value_or("");
  out.realm = merged.realm.value_or("");
  out.password = merged.password.value_or("");
  return Status::Ok();
}

}  // namespace perfsim::recorder
