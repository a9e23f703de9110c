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

RegKey& Registry::ensure(std::string_view path) {
  RegKey* k = &root_;
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

void Registry::set_last_write(int64_t t) { stamp(root_, t); }

}  // namespace perfsim::replayer
