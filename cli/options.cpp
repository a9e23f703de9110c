#include "cli/options.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fmt/core.h>

#include "captures/writer.h"
#include "cli/commands.h"
#include "core/config.h"
#include "core/suggest.h"

namespace perfsim::cli {

void add_smb_options(CLI::App* c, SmbOptions& o) {
  c->add_option("--user,-U", o.user,
                "Account, as USER, DOMAIN\\USER or USER@REALM (else --auth-file, then $PERFSIM_USER; none: "
                "anonymous over SMB, unauthenticated over TCP)");
  c->add_option("--domain", o.domain, "The account's domain (default: the host's own accounts)");
  c->add_option("--password", o.password,
                "Password (visible to other local users: prefer --auth-file or $PERFSIM_PASSWORD)");
  c->add_option("--auth-file,-A", o.auth_file, "Samba-style authentication file (username =, password =, domain =)")
      ->check(input_file());
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

void add_growth_options(CLI::App* c, GrowthOptions& o) {
  c->add_option("--growth", o.growth,
                "Buffer growth after ERROR_MORE_DATA: returned (use the size the host says), double, add:N")
      ->capture_default_str();
  c->add_option("--initial", o.initial, "First buffer size in bytes")->capture_default_str();
  c->add_option("--max-tries", o.max_tries, "Give up after this many QueryValue calls per value")
      ->capture_default_str();
}

Status parse_growth(const GrowthOptions& o, recorder::Growth& g) {
  const std::string& growth = o.growth;
  g.initial = o.initial;
  g.max_tries = o.max_tries;
  if (growth == "returned")
    g.kind = recorder::Growth::Kind::kReturned;
  else if (growth == "double")
    g.kind = recorder::Growth::Kind::kDouble;
  else if (growth.rfind("add:", 0) == 0) {
    g.kind = recorder::Growth::Kind::kAdd;
    g.step = 0;
    if (!config::parse_uint_as(std::string_view(growth).substr(4), "--growth add:N", g.step).ok() || g.step == 0)
      return Status::InvalidArgument("--growth add:N needs a positive byte count N, e.g. add:4096");
  } else {
    return Status::InvalidArgument("--growth '" + growth + "' is not one of returned, double, add:N");
  }
  return Status::Ok();
}

void add_format_option(CLI::App* c, uint32_t& version) {
  c->add_option("--format-version", version, "Capture format to write: 2, or 1 for perfsim before format v2")
      ->check(CLI::Range(1, 2))
      ->capture_default_str();
}

namespace {

// Thrown by input_file/input_dir: a ParseError, so CLI11 stops parsing, but not a ValidationError,
// which CLI11 would turn into a usage message.
class InputError : public CLI::ParseError {
 public:
  explicit InputError(const std::string& msg) : CLI::ParseError("InputError", msg, kExitFailure) {}
};

CLI::Validator input_path(bool want_dir) {
  return CLI::Validator(
      [want_dir](std::string& path) -> std::string {
        std::error_code ec;
        const auto st = std::filesystem::status(path, ec);
        if (!std::filesystem::exists(st)) throw InputError(path + ": no such " + (want_dir ? "directory" : "file"));
        if (std::filesystem::is_directory(st) != want_dir)
          throw InputError(path + (want_dir ? ": not a directory" : ": is a directory, not a file"));
        if (::access(path.c_str(), R_OK) != 0)
          throw InputError(path + ": cannot be read (" + std::strerror(errno) + ")");
        return {};
      },
      want_dir ? "DIR" : "FILE");
}

// The parsed subcommands from the top: perfsim, then e.g. names, then export.
std::vector<const CLI::App*> parsed_chain(const CLI::App& app) {
  std::vector<const CLI::App*> chain{&app};
  for (auto subs = app.get_subcommands(); !subs.empty(); subs = subs.front()->get_subcommands())
    chain.push_back(subs.front());
  return chain;
}

std::string command_name(const std::vector<const CLI::App*>& chain) {
  std::string name = "perfsim";
  for (size_t i = 1; i < chain.size(); ++i) name += " " + chain[i]->get_name();
  return name;
}

int said(const std::string& command, const std::string& message, int code) {
  std::fprintf(stderr, "%s: %s\n", command.c_str(), message.c_str());
  return code;
}

bool looks_like_option(const std::string& arg) {
  return arg.size() > 1 && arg[0] == '-' && !std::isdigit(static_cast<unsigned char>(arg[1]));
}

std::vector<std::string> option_names(const CLI::App& a) {
  std::vector<std::string> names;
  for (const CLI::Option* o : a.get_options()) {
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : o->get_snames()) names.push_back("-" + s);
  }
  return names;
}

// "unknown option" with the nearest real one when CLI11 was left an argument it does not
// know at some level (a misspelt option, or a word where a subcommand goes); empty otherwise.
std::string unknown_argument(const std::vector<const CLI::App*>& chain) {
  for (size_t i = 0; i < chain.size(); ++i) {
    const CLI::App& a = *chain[i];
    const std::vector<std::string> left = a.remaining(false);
    for (const std::string& arg : left) {
      if (arg == "--") break;  // what follows is the command's own (perfsim check -- COMMAND ARGS)
      if (!looks_like_option(arg)) continue;
      const std::string name = arg.substr(0, arg.find('='));
      return "unknown option " + name + did_you_mean(name, option_names(a)) + "\nRun '" +
             command_name({chain.begin(), chain.begin() + ptrdiff_t(i) + 1}) + " --help' for its options.";
    }
    const bool last = i + 1 == chain.size();
    const auto subs = a.get_subcommands([](const CLI::App*) { return true; });
    if (last && !subs.empty() && !left.empty()) {
      std::vector<std::string> names;
      for (const CLI::App* s : subs) names.push_back(s->get_name());
      const std::string near = did_you_mean(left.front(), names);
      return "unknown command " + left.front() + near + "\nRun '" + command_name(chain) + " --help' for the commands.";
    }
  }
  return {};
}

}  // namespace

CLI::Validator input_file() { return input_path(false); }
CLI::Validator input_dir() { return input_path(true); }

CLI::Validator output_file() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        const Status s = captures::check_replaceable(path);
        return s.ok() ? std::string() : s.message();
      },
      "FILE");
}

CLI::Validator duration() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double seconds = 0;
        if (Status s = config::parse_duration(text, seconds); !s.ok()) return s.message();
        text = fmt::format("{}", seconds);
        return {};
      },
      "DURATION");
}

int parse_error_exit(CLI::App& app, const CLI::ParseError& e) {
  const std::vector<const CLI::App*> chain = parsed_chain(app);
  // An unknown argument first: a misspelt option can push its value into an input positional,
  // whose check fails before CLI11 reports what it did not know.
  if (const std::string unknown = unknown_argument(chain); !unknown.empty())
    return said(command_name(chain), unknown, kExitUsage);
  if (dynamic_cast<const InputError*>(&e)) return said(command_name(chain), e.what(), kExitFailure);
  app.exit(e);
  std::fprintf(stderr, "Run 'perfsim --help' or 'perfsim <command> --help' for usage.\n");
  return kExitUsage;
}

}  // namespace perfsim::cli
