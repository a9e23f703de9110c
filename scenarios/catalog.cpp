// Built-in scenarios and the user's directories (catalog.h).
#include "scenarios/catalog.h"

#include <algorithm>
#include <filesystem>
#include <fmt/ranges.h>

#include "core/file.h"
#include "scenarios/builtin_data.h"

namespace perfsim::scenarios {
namespace {

namespace fs = std::filesystem;

bool is_scenario_file(std::string_view name) { return name.size() > 5 && name.substr(name.size() - 5) == ".toml"; }

// A built-in scenario's neighbours are the other built-in files.
Status builtin_beside(const std::string& name, std::string& text, std::string& path) {
  for (const BuiltinFile& f : builtin_files())
    if (f.name == name) {
      text = std::string(f.text);
      path = "builtin:" + name;
      return Status::Ok();
    }
  return Status::NotFound("no built-in file " + name + " (built-in scenarios name only files in scenarios/builtin/)");
}

Status load_builtin(std::vector<Scenario>& out) {
  for (const BuiltinFile& f : builtin_files()) {
    if (!is_scenario_file(f.name)) continue;
    config::Doc doc;
    Scenario sc;
    Status s = config::parse_toml(f.text, "builtin:" + std::string(f.name), doc);
    if (s.ok()) s = read_scenario(doc, builtin_beside, sc);
    if (!s.ok()) return s;
    out.push_back(std::move(sc));
  }
  return Status::Ok();
}

Status load_dir(const std::string& dir, std::vector<Scenario>& out) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::InvalidArgument("--scenario-dir " + dir + ": not a directory");
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && is_scenario_file(e.path().filename().string())) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& p : files) {
    // A scenario's own files (specs, captures) are its neighbours in the same directory.
    auto beside = [&p](const std::string& name, std::string& text, std::string& path) {
      path = fs::path(name).is_relative() ? (p.parent_path() / name).string() : name;
      return read_bounded_file(path, "scenario file", text);
    };
    config::Doc doc;
    Scenario sc;
    Status s = config::load_file(p.string(), doc, "scenario");
    if (s.ok()) s = read_scenario(doc, beside, sc);
    if (!s.ok()) return s;
    for (ScenarioHost& h : sc.hosts)
      if (!h.capture.empty() && fs::path(h.capture).is_relative()) h.capture = (p.parent_path() / h.capture).string();
    out.push_back(std::move(sc));
  }
  return Status::Ok();
}

}  // namespace

Status load_all(const std::vector<std::string>& dirs, std::vector<Scenario>& out) {
  std::vector<Scenario> all;
  if (Status s = load_builtin(all); !s.ok()) return s;
  std::sort(all.begin(), all.end(), [](const Scenario& a, const Scenario& b) { return a.name < b.name; });
  for (const std::string& d : dirs) {
    std::vector<Scenario> mine;
    if (Status s = load_dir(d, mine); !s.ok()) return s;
    for (Scenario& sc : mine) {
      auto same = [&sc](const Scenario& o) { return o.name == sc.name; };
      if (auto it = std::find_if(all.begin(), all.end(), same); it != all.end())
        *it = std::move(sc);  // the user's own version of a known case
      else
        all.push_back(std::move(sc));
    }
  }
  out = std::move(all);
  return Status::Ok();
}

Status find(const std::string& name, const std::vector<std::string>& dirs, Scenario& out) {
  std::vector<Scenario> all;
  if (Status s = load_all(dirs, all); !s.ok()) return s;
  for (Scenario& sc : all)
    if (sc.name == name) {
      out = std::move(sc);
      return Status::Ok();
    }
  return Status::NotFound("no scenario \"" + name + "\"; known: " + name_list(all) +
                          " (`perfsim scenarios` lists them)");
}

std::string name_list(const std::vector<Scenario>& all) {
  std::vector<std::string_view> names;
  for (const Scenario& sc : all) names.push_back(sc.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace perfsim::scenarios
