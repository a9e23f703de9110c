// Who the recorder logs on as over SMB: user, domain and password taken from command-line options,
// a Samba-style authentication file (as `smbclient -A` reads) and PERFSIM_* environment variables,
// merged field by field with options first (recorder/README.md, "Credentials").
//
// Guarantees: nothing here ever puts the password into a Status message or into describe(); a
// bad authentication file is reported by file name and line number, never by the line's text.
// No Samba code: this builds and is tested without samba-dev.
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "core/status.h"

namespace perfsim::recorder {

struct Credentials {
  enum class Kerberos {
    kAuto,      // Samba's default: Kerberos when a ticket and a KDC can be had, else NTLM
    kOff,       // NTLM only (what a workgroup host or an address without a SPN needs)
    kRequired,  // Kerberos or fail
  };
  std::string user;    // empty with anonymous
  std::string domain;  // NetBIOS or DNS domain; empty: the target's own (local accounts)
  std::string realm;   // Kerberos realm, only when it differs from the domain
  std::string password;
  bool anonymous = false;
  Kerberos kerberos = Kerberos::kAuto;

  // "anonymous", "alice", "CORP\alice (Kerberos required)": for messages and capture notes.
  std::string describe() const;
};

// What the command line said; each field unset when the option was not given.
struct CredentialOptions {
  std::optional<std::string> user;  // "alice", "CORP\alice", "CORP/alice" or "alice@corp.example"
  std::optional<std::string> domain;
  std::optional<std::string> password;
  std::optional<std::string> auth_file;  // Samba-style: username = , password = , domain = , realm =
  bool anonymous = false;                // log on anonymously, ignore every other source
  std::optional<Credentials::Kerberos> kerberos;
};

// Reads an environment variable; nullopt when unset. Tests pass a map, the CLI uses getenv.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
EnvLookup process_environment();

// Merges options > authentication file (--auth-file, else $PERFSIM_AUTH_FILE) > environment
// ($PERFSIM_USER, $PERFSIM_DOMAIN, $PERFSIM_PASSWORD). No user anywhere means anonymous; a password
// or domain without a user is an InvalidArgument (it would otherwise be silently dropped).
Status resolve_credentials(const CredentialOptions& options, const EnvLookup& env, Credentials& out);

// The fields one source named (an authentication file, the environment); unset ones let a lower
// source fill them.
struct CredentialFields {
  std::optional<std::string> user, domain, realm, password;
};

// Parses the text of a Samba-style authentication file: `key = value` lines, keys username,
// password, domain, realm (any case); blank lines and lines starting with # or ; are skipped; the
// value's leading blanks are dropped, its trailing ones kept (as Samba does: they may belong to
// the password); "username = CORP\alice" also sets the domain. `origin` names the file in
// messages. Unknown keys and lines without '=' are errors.
Status parse_auth_file(const std::string& text, const std::string& origin, CredentialFields& out);

// "CORP\alice" or "CORP/alice" -> domain CORP, user alice; anything else is left whole
// ("alice@corp.example" is a UPN Samba takes as is).
void split_domain_user(const std::string& text, std::string& domain, std::string& user);

// Parses "auto" | "off" | "required" (as the CLI's --kerberos takes it).
Status parse_kerberos(const std::string& text, Credentials::Kerberos& out);

}  // namespace perfsim::recorder
