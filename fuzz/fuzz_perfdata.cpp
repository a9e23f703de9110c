// perfdata: the first byte picks what the rest is.
//   0: a PERF_DATA_BLOCK: parse (tolerant and strict), validate, build again, assemble an answer
//      from it and format every object as `perfsim dump` does; walk it with the zero-copy view
//      (view.h), which must find what parse() found wherever parse() accepts;
//   1: two PERF_DATA_BLOCKs (u32 length of the first): every object of the second formatted
//      against the first (instance matching, counter formulas across samples);
//   2: a name table (Counter / Help REG_MULTI_SZ);
//   3: a HKEY_PERFORMANCE_DATA value name, then the objects it selects from a small catalog.
#include <string_view>

#include "fuzz/fuzz_input.h"
#include "perfdata/counters.h"
#include "perfdata/model.h"
#include "perfdata/names.h"
#include "perfdata/select.h"
#include "perfdata/validate.h"
#include "perfdata/view.h"

using namespace perfsim;
using namespace perfsim::perfdata;

namespace {

void format_all(const DataBlock* prev, const DataBlock& cur) {
  for (const Object& o : cur.objects) {
    std::vector<InstanceValues> values;
    (void)format_object(prev, cur, o.name_index, values);
  }
}

// Walks `blob` with the view; with `model` (what parse() accepted), every field the view reads must
// equal the model's and nothing may be damaged.
void walk_view(ByteView blob, const DataBlock* model) {
  BlockView b;
  if (!view_block(blob, b)) return fuzz::require(!model);
  ByteView name;
  (void)b.system_name(name);
  ObjectCursor objects(b);
  size_t k = 0;
  for (ObjectView o; objects.next(o); ++k) {
    const Object* m = model && k < model->objects.size() ? &model->objects[k] : nullptr;
    fuzz::require(!model || (m && m->name_index == o.name_index() && o.lengths_consistent()));
    if (!o.lengths_consistent()) continue;
    CounterDefCursor defs(o);
    size_t j = 0;
    for (CounterDefView c; defs.next(c); ++j)
      fuzz::require(!m || (j < m->counters.size() && m->counters[j].type == c.type() &&
                           m->counters[j].size == c.size() && m->counters[j].offset == c.offset()));
    fuzz::require(!m || j == m->counters.size());
    if (!o.multi_instance()) {
      CounterBlockView cb;
      fuzz::require(single_block(o, cb) || !m);
      fuzz::require(!m || cb.length == m->counter_block.size());
      continue;
    }
    InstanceCursor instances(o);
    size_t i = 0;
    for (InstanceView in; instances.next(in); ++i) {
      ByteView n;
      (void)in.name(n);
      fuzz::require(!m || (i < m->instances.size() && in.block.length == m->instances[i].counter_block.size() &&
                           in.unique_id() == uint32_t(m->instances[i].unique_id)));
    }
    fuzz::require(!m || (!instances.damaged() && i == m->instances.size()));
  }
  fuzz::require(!model || (!objects.damaged() && k == model->objects.size()));
}

void one_block(ByteView blob) {
  (void)validate(blob);
  DataBlock strict;
  (void)parse(blob, strict, {.tolerant = false});
  DataBlock block;
  if (!parse(blob, block).ok()) return walk_view(blob, nullptr);
  walk_view(blob, &block);
  format_all(nullptr, block);
  format_all(&block, block);
  const Bytes rebuilt = build(block);
  DataBlock again;
  (void)parse(rebuilt, again);
  std::vector<uint32_t> indices;
  for (const Object& o : block.objects) indices.push_back(o.name_index);
  (void)build(assemble(block, {&block}, indices));
}

void two_blocks(fuzz::Input& in) {
  const ByteView first = in.take(in.u32() % (1u << 20));
  DataBlock prev, cur;
  if (!parse(first, prev).ok() || !parse(in.rest(), cur).ok()) return;
  format_all(&prev, cur);
}

void names(ByteView multisz) {
  (void)parse_multisz(multisz);
  NameTable t;
  if (parse_names(multisz, t).ok()) {
    (void)t.declared_last();
    (void)t.highest_index();
    (void)build_names(t);
  }
}

void query(ByteView text) {
  const Query q = parse_query(std::string_view(reinterpret_cast<const char*>(text.data()), text.size()));
  const std::vector<ObjectInfo> catalog = {{2, "perfos", false},     {4, "perfos", false},     {238, "perfos", false},
                                           {230, "perfproc", false}, {232, "perfproc", false}, {786, "tcpip", true},
                                           {1548, "perfdisk", false}};
  (void)select_objects(q, catalog);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  switch (in.u8() % 4) {
    case 0:
      one_block(in.rest());
      break;
    case 1:
      two_blocks(in);
      break;
    case 2:
      names(in.rest());
      break;
    default:
      query(in.rest());
      break;
  }
  return 0;
}
