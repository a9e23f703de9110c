#include "cli/options.h"

#include <CLI/CLI.hpp>

namespace perfsim::cli {

void add_smb_options(CLI::App* c, SmbOptions& o) {
  c->add_option("--user,-U", o.user,
                "Account, as USER, DOMAIN\\USER or USER@REALM (else --auth-file, then $PERFSIM_USER; none: "
                "anonymous over SMB, unauthenticated over TCP)");
  c->add_option("--domain", o.domain, "The account's domain (default: the host's own accounts)");
  c->add_option("--password", o.password,
                "Password (visible to other local users: prefer --auth-file or $PERFSIM_PASSWORD)");
  c->add_option("--auth-file,-A", o.auth_file, "Samba-style authentication file (username =, password =, domain =)");
  c->add_flag("--anonymous", o.anonymous,
              "Log on anonymously (SMB) / unauthenticated (TCP), ignoring every other credential source");
  c->add_option("--kerberos", o.kerberos, "SMB: auto (default), off (NTLM only) or required");
  c->add_option("--smb-protocols", o.protocols,
                "SMB: dialect range MIN-MAX (NT1, SMB2_02, SMB2_10, SMB3_00, SMB3_02, SMB3_11)");
  c->add_flag("--sign", o.sign, "SMB: require signing");
  c->add_flag("--encrypt", o.encrypt, "SMB: require SMB3 encryption");
  c->add_option("--auth-level", o.auth_level, "TCP with a user: DCE/RPC auth level connect, sign (default) or seal");
  c->add_option("--auth-type", o.auth_type, "TCP with a user: ntlm (NTLMSSP, default) or spnego");
}

void add_format_option(CLI::App* c, uint32_t& version) {
  c->add_option("--format-version", version, "Capture format to write: 2, or 1 for perfsim before format v2")
      ->check(CLI::Range(1, 2))
      ->capture_default_str();
}

}  // namespace perfsim::cli
