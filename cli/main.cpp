// perfsim: dispatch only. Each subcommand registers itself and its options (cli/commands.h's
// kCommands, code in *_cmd.cpp); its callback does the work and sets the exit code (0 ok,
// 1 failure, 2 usage).
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/options.h"

using namespace perfsim::cli;

int main(int argc, char** argv) {
  CLI::App app{
      "perfsim: record, store and replay what Windows hosts answer over Remote Registry (winreg) perf-data queries"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "perfsim 0.1.0");
  int rc = kExitOk;
  for (AddCommand add : kCommands) add(app, rc);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) { return app.exit(e); } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::Success& e) { return app.exit(e); } catch (const CLI::ParseError& e) {
    return parse_error_exit(app, e);
  }
  return rc;
}
