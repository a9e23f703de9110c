#include "replayer/quirks.h"

#include <algorithm>

#include "core/suggest.h"
#include "replayer/quirk_table.h"
#include "windows/os.h"

namespace perfsim::replayer {

std::vector<std::string> quirk_names() {
  std::vector<std::string> n;
  for (const QuirkRow& r : quirk_table()) n.emplace_back(r.name);
  return n;
}

Status apply_setting(Quirks& q, const QuirkSetting& s) {
  const QuirkRow* row = find_quirk(s.name);
  if (!row) {
    const std::vector<std::string> known = quirk_names();
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    return Status::InvalidArgument("unknown quirk '" + s.name + "'" + did_you_mean(s.name, known) + " (known: " + list +
                                   ")");
  }
  const std::vector<std::string> params(row->params.begin(), row->params.end());
  for (const auto& [k, v] : s.params)
    if (std::find(params.begin(), params.end(), k) == params.end())
      return Status::InvalidArgument("quirk " + s.name + ": unknown parameter '" + k + "'" + did_you_mean(k, params));
  return row->apply(q, s);
}

std::vector<std::string> quirk_settings(const Quirks& q) {
  std::vector<std::string> out;
  for (const QuirkRow& r : quirk_table())
    if (std::string s = r.show(q); !s.empty()) out.push_back(std::move(s));
  return out;
}

Status profile_quirks(std::string_view profile, Quirks& q) {
  if (profile == "rrp-exact") return Status::Ok();  // no OS: plain MS-RRP, the defaults
  const windows::OsProfile* os = windows::find_os(profile);
  if (!os)
    return Status::NotFound("unknown profile '" + std::string(profile) + "'; known: " + windows::os_name_list() +
                            ", rrp-exact");
  if (Status st = apply_setting(q, QuirkSetting{std::string(os->more_data), true, {}}); !st.ok()) return st;
  for (std::string_view name : os->quirks)
    if (Status st = apply_setting(q, QuirkSetting{std::string(name), true, {}}); !st.ok()) return st;
  return Status::Ok();
}

Status fingerprint_quirks(const captures::Fingerprint& fp, Quirks& q) {
  // A fingerprint that names what perfsim does not know is refused, not half applied.
  const auto named = [](const Status& s) { return Status::InvalidArgument("capture fingerprint: " + s.message()); };
  if (fp.profile) {
    if (Status st = profile_quirks(*fp.profile, q); !st.ok()) return named(st);
  }
  // A synthetic capture's more_data is a copy of its profile's row when it was made, not a
  // measurement: the row as it stands now (applied above) is the truth about that version.
  const bool copied = fp.source == "synth" && fp.profile;
  if (fp.more_data && !copied) {
    if (Status st = apply_setting(q, QuirkSetting{*fp.more_data, true, fp.params}); !st.ok()) return named(st);
  }
  if (fp.process_v1_disabled) {
    if (Status st = apply_setting(q, QuirkSetting{"process-v1-disabled", *fp.process_v1_disabled, {}}); !st.ok())
      return named(st);
  }
  if (fp.pipe_not_available_first) {
    if (Status st = apply_setting(q, QuirkSetting{"pipe-not-available-first", *fp.pipe_not_available_first, {}});
        !st.ok())
      return named(st);
  }
  return Status::Ok();
}

Status fingerprint_quirks(const std::string& json, Quirks& q) {
  captures::Fingerprint fp;
  if (Status s = captures::from_json(json, fp); !s.ok()) return s;
  return fingerprint_quirks(fp, q);
}

}  // namespace perfsim::replayer
