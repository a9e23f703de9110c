// Credentials: where user, domain and password come from (options > authentication file >
// PERFSIM_* environment), the Samba authentication file format, and that the password shows up in
// no message. No network.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>

#include "recorder/credentials.h"

namespace perfsim::recorder {
namespace {

namespace fs = std::filesystem;

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional(it->second);
  };
}

// A file in a directory of its own, removed with this object.
struct TempFile {
  explicit TempFile(const std::string& text) { std::ofstream(path, std::ios::binary) << text; }
  ~TempFile() { fs::remove_all(dir); }
  const fs::path dir = [] {
    const fs::path d = fs::temp_directory_path() / ("perfsim-cred-test-" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  const std::string path = (dir / "auth").string();
};

TEST_CASE("authentication file: the keys smbclient -A reads", "[recorder_smb][credentials]") {
  CredentialFields f;
  const std::string text =
      "# a comment\n; another\n\n  Username = CORP\\alice\r\nPASSWORD=  pa ss=word \r\ndomain\t=\tEAST\nrealm = "
      "EAST.EXAMPLE\n";
  REQUIRE(parse_auth_file(text, "auth.txt", f).ok());
  CHECK(f.user == "alice");
  CHECK(f.domain == "EAST");  // the later domain line wins over the username's
  CHECK(f.realm == "EAST.EXAMPLE");
  CHECK(f.password == "pa ss=word ");  // leading blanks go, trailing ones and '=' stay, CR goes

  CredentialFields empty_pw;
  REQUIRE(parse_auth_file("username = bob\npassword =\n", "f", empty_pw).ok());
  CHECK(empty_pw.password == "");
  CHECK_FALSE(empty_pw.domain.has_value());
}

TEST_CASE("authentication file errors name the line, never its text", "[recorder_smb][credentials]") {
  CredentialFields f;
  Status s = parse_auth_file("username = bob\nTopSecret123\n", "/x/auth", f);
  INFO(s.ToString());
  CHECK(s.code() == Status::Code::kInvalidArgument);
  CHECK(s.message().find("/x/auth, line 2") != std::string::npos);
  CHECK(s.message().find("TopSecret123") == std::string::npos);

  s = parse_auth_file("user = bob\n", "/x/auth", f);
  CHECK(s.message().find("line 1: unknown key 'user'") != std::string::npos);
}

TEST_CASE("resolve_credentials: options over the file over the environment", "[recorder_smb][credentials]") {
  const TempFile auth("username = FILEDOM\\fileuser\npassword = file-pw\n");
  const std::string& file = auth.path;
  const EnvLookup env =
      env_of({{"PERFSIM_USER", "envuser"}, {"PERFSIM_PASSWORD", "env-pw"}, {"PERFSIM_DOMAIN", "ENVDOM"}});
  Credentials c;

  SECTION("environment alone") {
    REQUIRE(resolve_credentials({}, env, c).ok());
    CHECK(c.user == "envuser");
    CHECK(c.domain == "ENVDOM");
    CHECK(c.password == "env-pw");
    CHECK_FALSE(c.anonymous);
  }
  SECTION("a file beats the environment, field by field") {
    CredentialOptions o;
    o.auth_file = file;
    REQUIRE(resolve_credentials(o, env, c).ok());
    CHECK(c.user == "fileuser");
    CHECK(c.domain == "FILEDOM");
    CHECK(c.password == "file-pw");
  }
  SECTION("PERFSIM_AUTH_FILE names the file when no option does") {
    REQUIRE(resolve_credentials({}, env_of({{"PERFSIM_AUTH_FILE", file}}), c).ok());
    CHECK(c.user == "fileuser");
  }
  SECTION("options beat both; what they leave out comes from below") {
    CredentialOptions o;
    o.auth_file = file;
    o.user = "WEST/optuser";
    REQUIRE(resolve_credentials(o, env, c).ok());
    CHECK(c.user == "optuser");
    CHECK(c.domain == "WEST");
    CHECK(c.password == "file-pw");
    o.password = "opt-pw";
    o.domain = "IGNORED";  // the user's own domain part wins over --domain
    REQUIRE(resolve_credentials(o, env, c).ok());
    CHECK(c.password == "opt-pw");
    CHECK(c.domain == "WEST");
  }
  SECTION("--anonymous ignores every other source") {
    CredentialOptions o;
    o.anonymous = true;
    o.user = "someone";
    REQUIRE(resolve_credentials(o, env, c).ok());
    CHECK(c.anonymous);
    CHECK(c.user.empty());
    CHECK(c.password.empty());
  }
  SECTION("no user anywhere is anonymous; a password without a user is an error") {
    REQUIRE(resolve_credentials({}, env_of({}), c).ok());
    CHECK(c.anonymous);
    const Status s = resolve_credentials({}, env_of({{"PERFSIM_PASSWORD", "lonely-pw"}}), c);
    CHECK(s.code() == Status::Code::kInvalidArgument);
    CHECK(s.message().find("lonely-pw") == std::string::npos);
  }
  SECTION("a missing file is an error naming it") {
    CredentialOptions o;
    o.auth_file = file + ".missing";
    const Status s = resolve_credentials(o, env, c);
    CHECK(s.code() == Status::Code::kNotFound);
    CHECK(s.message().find(file + ".missing") != std::string::npos);
  }
  SECTION("USER and PASSWD, which smbclient reads, are not used: USER is the local login") {
    REQUIRE(resolve_credentials({}, env_of({{"USER", "root"}, {"PASSWD", "x"}}), c).ok());
    CHECK(c.anonymous);
  }
}

TEST_CASE("describe() never shows the password", "[recorder_smb][credentials]") {
  Credentials c;
  c.user = "alice";
  c.domain = "CORP";
  c.password = "S3cret!";
  CHECK(c.describe() == "CORP\\alice");
  c.kerberos = Credentials::Kerberos::kRequired;
  CHECK(c.describe() == "CORP\\alice (Kerberos required)");
  c.anonymous = true;
  CHECK(c.describe() == "anonymous");

  Credentials::Kerberos k{};
  CHECK(parse_kerberos("OFF", k).ok());
  CHECK(k == Credentials::Kerberos::kOff);
  CHECK_FALSE(parse_kerberos("maybe", k).ok());
}

}  // namespace
}  // namespace perfsim::recorder
