#include "replayer/registry.h"

#include "core/utf16.h"

namespace perfsim::replayer {

std::vector<std::string> split_path(std::string_view path) { return split_nonempty(path, "\\"); }

const RegKey* RegKey::child(std::string_view n) const {
  for (const auto& k : subkeys)
    if (iequals(k->name, n)) return k.get();
  return nullptr;
}

const RegValue* RegKey::value(std::string_view n) const {
  for (const RegValue& v : values)
    if (iequals(v.name, n)) return &v;
  return nullptr;
}

namespace {

RegKey& ensure_below(RegKey& root, std::string_view path) {
  RegKey* k = &root;
  for (const std::string& part : split_path(path)) {
    RegKey* next = const_cast<RegKey*>(k->child(part));
    if (!next) {
      k->subkeys.push_back(std::make_unique<RegKey>());
      next = k->subkeys.back().get();
      next->name = part;
    }
    k = next;
  }
  return *k;
}

// HKEY_USERS as a read-only monitoring account sees it remotely: the profiles Windows loads
// for its service accounts, by well-known SID (Microsoft, "Well-known SIDs": S-1-5-18 Local
// System, S-1-5-19 Local Service, S-1-5-20 Network Service) and .DEFAULT (the profile of
// S-1-5-18, which new profiles start from: Microsoft, "HKEY_USERS", Predefined Keys). The
// caller's own profile is not loaded by a network logon, so it is not listed, and
// OpenCurrentUser (MS-RRP 3.1.5.2) serves .DEFAULT: RegOpenCurrentUser "uses the thread's token
// to access the appropriate key, or the default if the profile is not loaded" (Microsoft,
// RegOpenCurrentUser). The order is the one `reg query HKU` prints on Windows Server.
void users_hive(RegKey& users) {
  for (const char* sid : {".DEFAULT", "S-1-5-19", "S-1-5-20", "S-1-5-18"}) ensure_below(users, sid);
  RegKey& dflt = ensure_below(users, ".DEFAULT");
  for (const char* sub : {"Control Panel", "Environment", "Keyboard Layout", "Software"}) ensure_below(dflt, sub);
}

}  // namespace

Registry::Registry() {
  root_.name = "HKLM";
  users_.name = "HKU";
  users_hive(users_);
  // HKEY_CLASSES_ROOT merges HKLM\SOFTWARE\Classes with the user's Software\Classes (Microsoft,
  // "HKEY_CLASSES_ROOT Key"); without a loaded user profile it is the machine's part.
  ensure("SOFTWARE\\Classes");
}

RegKey& Registry::ensure(std::string_view path) { return ensure_below(root_, path); }

const RegKey& Registry::hive(Hive h) const {
  switch (h) {
    case Hive::kUsers:
      return users_;
    case Hive::kClassesRoot:
      return *open(root_, "SOFTWARE\\Classes");
    case Hive::kCurrentUser:
      return *open(users_, ".DEFAULT");
    case Hive::kLocalMachine:
      break;
  }
  return root_;
}

void Registry::set(std::string_view path, RegValue v) {
  RegKey& k = ensure(path);
  for (RegValue& existing : k.values) {
    if (iequals(existing.name, v.name)) {
      existing = std::move(v);
      return;
    }
  }
  k.values.push_back(std::move(v));
}

const RegKey* Registry::open(const RegKey& from, std::string_view path) const {
  const RegKey* k = &from;
  for (const std::string& part : split_path(path)) {
    k = k->child(part);
    if (!k) return nullptr;
  }
  return k;
}

namespace {
void stamp(RegKey& k, int64_t t) {
  k.last_write_100ns = t;
  for (auto& c : k.subkeys) stamp(*c, t);
}
}  // namespace

void Registry::set_last_write(int64_t t) {
  stamp(root_, t);
  stamp(users_, t);
}

}  // namespace perfsim::replayer
