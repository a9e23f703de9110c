#include "synth/roles.h"

#include <algorithm>
#include <fmt/ranges.h>
#include <map>
#include <mutex>

#include "synth/roles_data.h"

namespace perfsim::synth {

const std::vector<std::string>& role_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const RoleFile& f : role_files()) v.emplace_back(f.name);
    return v;
  }();
  return names;
}

std::string role_name_list() { return fmt::format("{}", fmt::join(role_names(), ", ")); }

Status check_roles(const std::vector<std::string>& roles) {
  const std::vector<std::string>& known = role_names();
  for (auto it = roles.begin(); it != roles.end(); ++it) {
    if (std::find(known.begin(), known.end(), *it) == known.end())
      return Status::InvalidArgument("unknown role \"" + *it + "\" (known roles: " + role_name_list() + ")");
    if (std::find(roles.begin(), it, *it) != it) return Status::InvalidArgument("role \"" + *it + "\" is named twice");
  }
  return Status::Ok();
}

std::vector<std::string> host_roles(const Spec& spec, const Profile& profile) {
  std::vector<std::string> roles;
  if (!profile.os->dotnet_framework.empty()) roles.push_back("dotnet");
  for (const std::string& r : spec.roles)
    if (std::find(roles.begin(), roles.end(), r) == roles.end()) roles.push_back(r);
  return roles;
}

Status role_objects(std::string_view role, const std::vector<ObjectSpec>*& out) {
  // Parsed once each; the built-in files are checked by the synth tests, so a parse error here
  // means a broken build and is reported as such.
  static std::mutex mu;
  static std::map<std::string, Spec, std::less<>> parsed;
  const std::lock_guard lock(mu);
  if (auto it = parsed.find(role); it != parsed.end()) {
    out = &it->second.objects;
    return Status::Ok();
  }
  for (const RoleFile& f : role_files()) {
    if (f.name != role) continue;
    Spec spec;
    if (Status s = parse_spec_toml(f.toml, spec); !s.ok())
      return Status::Corruption("built-in role \"" + std::string(role) + "\" (synth/roles/" + std::string(role) +
                                ".toml): " + s.message());
    out = &parsed.emplace(std::string(role), std::move(spec)).first->second.objects;
    return Status::Ok();
  }
  return check_roles({std::string(role)});
}

}  // namespace perfsim::synth
