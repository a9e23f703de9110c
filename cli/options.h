// Option groups several subcommands share, registered the same way by each, the checks every
// input file and time option goes through, and how a command line CLI11 refuses becomes an exit
// code and a message that says what to write.
#pragma once
#include <cstdint>
#include <string>

#include "cli/target.h"
#include "core/status.h"
#include "recorder/client.h"

namespace CLI {
class App;
class ParseError;
class Validator;
}  // namespace CLI

namespace perfsim::cli {

// Who logs on and how, for subcommands that reach a host over SMB or ncacn_ip_tcp.
void add_smb_options(CLI::App* c, SmbOptions& o);
// How a collector grows its buffer after ERROR_MORE_DATA, as `perfsim query` and `perfsim load`
// take it: --growth returned|double|add:N, --initial, --max-tries.
struct GrowthOptions {
  std::string growth = "returned";
  uint32_t initial = 64 * 1024;
  uint32_t max_tries = 16;
};
void add_growth_options(CLI::App* c, GrowthOptions& o);
// InvalidArgument says what to write.
Status parse_growth(const GrowthOptions& o, recorder::Growth& g);
// Which capture format a writing subcommand makes (captures/FORMAT.md).
void add_format_option(CLI::App* c, uint32_t& version);

// `->check(input_file())` on every option naming a file the command reads (input_dir(): a
// directory): a missing, unreadable or wrong kind of path is a failure, exit 1 ("PATH: no such
// file"), as when the command itself finds it missing; not a usage error.
CLI::Validator input_file();
CLI::Validator input_dir();
// `->check(output_file())` on every option naming a file a command replaces (written beside it and
// renamed into place: captures/writer.h write_replacing): an existing path that is not a regular
// file (a device node, FIFO, socket, directory) is a usage error, exit 2, saying what to write.
CLI::Validator output_file();
// `->transform(duration())` on every option that takes a time in seconds: "15s", "2m", "1h",
// "500ms", "1h30m" or plain seconds (core/config.h parse_duration), handed to the option as seconds.
CLI::Validator duration();

// What a refused command line exits with, after saying why on stderr: an unknown option or
// subcommand is a usage error (2) naming the nearest valid one ("unknown option --profle; did you
// mean --profile?"), a missing input 1, anything else CLI11's own message and 2.
int parse_error_exit(CLI::App& app, const CLI::ParseError& e);

}  // namespace perfsim::cli
