// Server roles a synthetic host can have (`[host] roles = ["iis", "mssql"]`): each adds the objects
// that role's software registers, as extensible providers installed after the OS (title indices
// above the OS's, a Services\<provider>\Performance key with First/Last Counter, as lodctr writes it).
// A role is a spec fragment in synth/roles/<name>.toml, in the same `[[objects]]` schema users
// write, built into perfsim; the files cite the WMI classes the counters and types come from.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "synth/profiles.h"
#include "synth/spec.h"

namespace perfsim::synth {

// The roles perfsim knows, in the order their objects are registered.
const std::vector<std::string>& role_names();
// The same, as "iis, mssql, ..." for messages and --help.
std::string role_name_list();

// InvalidArgument naming the first role perfsim does not know (with the known ones) or one named twice.
Status check_roles(const std::vector<std::string>& roles);

// The roles a host of `profile` has: "dotnet" first where the OS includes the .NET Framework
// (windows/os.h dotnet_framework), then spec.roles in their order.
std::vector<std::string> host_roles(const Spec& spec, const Profile& profile);

// The objects of `role`; they live as long as the program (catalogs point into them).
Status role_objects(std::string_view role, const std::vector<ObjectSpec>*& out);

}  // namespace perfsim::synth
