// The HKLM subset a simulated host serves: a tree of keys and values built from the capture's
// registry values (and its name tables, as Perflib\<lang> Counter/Help). Immutable once built,
// so every connection's thread may read it without locks. Names compare case-insensitively,
// as Windows does.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/bytes.h"

namespace perfsim::replayer {

struct RegValue {
  std::string name;
  uint32_t type = 0;
  Bytes data;
  // The data is the serving host's own name (ComputerName): each host of a shared recording
  // answers its own (SimulatedHost::value_data), as a fleet's members differ by name.
  bool host_name = false;
};

struct RegKey {
  std::string name;
  std::vector<RegValue> values;
  std::vector<std::unique_ptr<RegKey>> subkeys;
  int64_t last_write_100ns = 0;  // FILETIME reported by QueryInfoKey

  const RegKey* child(std::string_view name) const;
  const RegValue* value(std::string_view name) const;
};

// The hives MS-RRP opens from a root (3.1.5.1 OpenClassesRoot, 3.1.5.2 OpenCurrentUser,
// 3.1.5.3 OpenLocalMachine, 3.1.5.5 OpenUsers): HKCR and HKCU are views into the other two.
enum class Hive { kLocalMachine, kUsers, kClassesRoot, kCurrentUser };

class Registry {
 public:
  Registry();
  // Sets (or replaces) a value, creating the keys on the way. `path` is backslash-separated.
  void set(std::string_view path, RegValue v);
  // Creates a key without values (a subkey collectors enumerate).
  RegKey& ensure(std::string_view path);
  // Resolves `path` below `from`; an empty path names `from` itself. nullptr when absent.
  const RegKey* open(const RegKey& from, std::string_view path) const;
  const RegKey& root() const { return root_; }
  // The key a hive opens to: HKLM and HKU are roots; HKCR is HKLM\SOFTWARE\Classes and HKCU is
  // HKU\.DEFAULT (see users_hive() in registry.cpp for why).
  const RegKey& hive(Hive h) const;
  void set_last_write(int64_t t);  // on every key

 private:
  RegKey root_;
  RegKey users_;
};

// Splits "A\\B\\\\C" into {"A","B","C"} (empty components dropped, as Windows tolerates).
std::vector<std::string> split_path(std::string_view path);

}  // namespace perfsim::replayer
