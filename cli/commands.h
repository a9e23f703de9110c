// The `perfsim` subcommands. Each *_cmd.cpp declares its options struct, registers its CLI11
// subcommand and options (add_*), and does the work; main.cpp only walks kCommands. A callback
// stores the process exit code in `rc`: 0 ok, 1 failure (the message says what failed and what to
// check), 2 usage. Adding a flag touches one file, the command's own.
#pragma once

namespace CLI {
class App;
}

namespace perfsim::cli {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

using AddCommand = void (*)(CLI::App& app, int& rc);

void add_synth(CLI::App& app, int& rc);
void add_convert(CLI::App& app, int& rc);
void add_inspect(CLI::App& app, int& rc);
void add_dump(CLI::App& app, int& rc);
void add_validate(CLI::App& app, int& rc);
void add_serve(CLI::App& app, int& rc);
void add_scenarios(CLI::App& app, int& rc);
void add_journal(CLI::App& app, int& rc);
void add_check(CLI::App& app, int& rc);
void add_query(CLI::App& app, int& rc);
void add_load(CLI::App& app, int& rc);
void add_record(CLI::App& app, int& rc);
void add_import(CLI::App& app, int& rc);
void add_lodctr(CLI::App& app, int& rc);
void add_unlodctr(CLI::App& app, int& rc);
void add_names(CLI::App& app, int& rc);
void add_series(CLI::App& app, int& rc);
void add_diff(CLI::App& app, int& rc);
void add_redact(CLI::App& app, int& rc);

// In the order `perfsim --help` lists them.
inline constexpr AddCommand kCommands[] = {add_synth,   add_convert, add_redact,   add_inspect, add_dump,
                                           add_series,  add_diff,    add_validate, add_serve,   add_scenarios,
                                           add_journal, add_check,   add_query,    add_load,    add_record,
                                           add_import,  add_lodctr,  add_unlodctr, add_names};

}  // namespace perfsim::cli
