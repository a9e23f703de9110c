// Where the bits of a v2 capture go, and how far down they can go (issue 16): for the host
// `perfsim synth` makes (profile, N hours, 15 s, 200 processes), per column class (object, counter,
// low/high word), over every delta of an unchanged structure:
//   - the residuals under the split codec's predictors (delta / delta-of-delta, the better per
//     column as the writer picks): share of zeros, bits (sum of bit widths) and an order-0 entropy
//     estimate (entropy of the bit widths + the mantissa bits below the leading one, which random
//     increments do not let any coder shrink);
//   - what perfect cross-column prediction leaves: a column that is exactly the sum of two others
//     of its object, or the sum over the child instances (ParentObjectInstance) of a column of
//     another object, costs nothing when the relation holds in that record;
//   - the information content of synth's random draws per tick (synth/dynamics.cpp): the floor no
//     lossless coder beats, estimated as log2 of the width of each draw's output distribution
//     (uniform: its width; normal: sigma * sqrt(2 pi e)) for the objects that hold most of the bits
//     (Thread, Process, Processor); every other column is counted at its current entropy (an
//     upper bound on its floor).
// Usage: residual_bits [hours=1] [profile=2016]
#include <bit>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>

#include "captures/split.h"
#include "perfdata/view.h"
#include "synth/synth.h"

using namespace perfsim;
using namespace perfsim::captures;

namespace {

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "residual_bits: %s\n", what.c_str());
  std::exit(1);
}

uint32_t zigzag(uint32_t d) { return (d << 1) ^ uint32_t(int32_t(d) >> 31); }

// Counter index -> name from a REG_MULTI_SZ "Counter" table (UTF-16LE, ASCII names).
std::map<uint32_t, std::string> counter_names(const Capture& c) {
  std::map<uint32_t, std::string> out;
  for (const NameTable& t : c.names) {
    if (t.lang != "009") continue;
    std::vector<std::string> strs(1);
    for (size_t i = 0; i + 1 < t.counter.size(); i += 2) {
      const uint16_t ch = uint16_t(t.counter[i] | t.counter[i + 1] << 8);
      if (ch == 0)
        strs.emplace_back();
      else
        strs.back() += char(ch < 128 ? ch : '?');
    }
    for (size_t i = 0; i + 1 < strs.size(); i += 2)
      if (!strs[i].empty()) out[uint32_t(std::stoul(strs[i]))] = strs[i + 1];
  }
  return out;
}

// One group (column) of the split layout, named, and the object it belongs to.
struct Column {
  std::string cls;     // "Thread / % Processor Time lo"
  int object = -1;     // index into Walk::objects, -1 for the block header
  bool times = false;  // an object's PerfTime/PerfFreq
};
struct Object {
  uint32_t title = 0;
  std::vector<uint32_t> parent_title, parent_inst;  // per instance
  std::vector<size_t> groups;                       // its counter-word groups
};
struct Walk {
  std::vector<Column> cols;
  std::vector<Object> objects;
};

// The same walk as find_layout (split.cpp, through perfdata/view.h), keeping what each group is.
// Only called on payloads find_layout accepted.
Walk walk(ByteView p, const std::map<uint32_t, std::string>& names) {
  Walk w;
  auto nm = [&](uint32_t i) {
    auto it = names.find(i);
    return it == names.end() ? std::to_string(i) : it->second;
  };
  for (int k = 0; k < 10; ++k) w.cols.push_back({"block header", -1, false});
  perfdata::BlockView block;
  if (!perfdata::view_block(p, block)) return w;
  perfdata::ObjectCursor objects(block);
  for (perfdata::ObjectView ov; objects.next(ov);) {
    Object o;
    o.title = ov.name_index();
    const int oi = int(w.objects.size());
    for (int k = 0; k < 4; ++k) w.cols.push_back({"object times", oi, true});
    // word offset in the counter block -> counter name
    std::map<uint32_t, std::string> word;
    perfdata::CounterDefCursor defs(ov);
    for (perfdata::CounterDefView c; defs.next(c);) {
      word[c.offset()] = nm(c.name_index()) + (c.size() == 8 ? " lo" : "");
      if (c.size() == 8) word[c.offset() + 4] = nm(c.name_index()) + " hi";
    }
    uint32_t words = 0;
    if (perfdata::CounterBlockView b; !ov.multi_instance() && perfdata::single_block(ov, b)) {
      words = (b.length - 4) / 4;
    } else {
      perfdata::InstanceCursor instances(ov);
      for (perfdata::InstanceView in; instances.next(in);) {
        o.parent_title.push_back(in.parent_title_index());
        o.parent_inst.push_back(in.parent_instance());
        words = std::max(words, (in.block.length - 4) / 4);
      }
    }
    for (uint32_t k = 0; k < words; ++k) {
      auto it = word.find(4 + 4 * k);
      o.groups.push_back(w.cols.size());
      w.cols.push_back({nm(o.title) + " / " + (it == word.end() ? "word " + std::to_string(k) : it->second), oi});
    }
    w.objects.push_back(std::move(o));
  }
  return w;
}

struct Stats {
  uint64_t n = 0, zeros = 0, bits = 0, hist[33] = {};
  double floor_bits = 0;  // synth's draws (only where known)
  bool has_floor = false;
  uint64_t cross_n = 0;  // values a cross-column relation predicts exactly
  void add(uint32_t z) {
    ++n;
    zeros += z == 0;
    const int bw = std::bit_width(z);
    bits += uint64_t(bw);
    ++hist[bw];
  }
  // Order-0 estimate: entropy of the bit widths + the mantissa bits under the leading one.
  double entropy_bits() const {
    double h = 0, mant = 0;
    for (int b = 0; b <= 32; ++b) {
      if (!hist[b]) continue;
      const double q = double(hist[b]) / double(n);
      h -= double(hist[b]) * std::log2(q);
      mant += double(hist[b]) * std::max(0, b - 1);
    }
    return h + mant;
  }
};

// A cross-column relation: column x == a + b (same object), or x[i] == sum of child column a over the
// instances whose parent is instance i (b = -1, child object `child`).
struct ColumnRelation {
  size_t x, a;
  long b;
  int child = -1;
  uint64_t held = 0, tried = 0;
};

struct Query {
  Bytes structure;
  Layout layout;
  Walk w;
  std::vector<uint32_t> prev, prev2;
  int hist = 0;
  std::vector<ColumnRelation> rel;
};

// Column values of group g of the current record.
struct Vals {
  const Layout& l;
  const std::vector<uint32_t>& v;
  size_t begin(size_t g) const { return g ? l.group_end[g - 1] : 0; }
  size_t end(size_t g) const { return l.group_end[g]; }
  size_t size(size_t g) const { return end(g) - begin(g); }
};

bool sum_holds(const Vals& c, size_t x, size_t a, size_t b) {
  for (size_t k = 0; k < c.size(x); ++k)
    if (c.v[c.begin(x) + k] != c.v[c.begin(a) + k] + c.v[c.begin(b) + k]) return false;
  return true;
}

bool child_sum_holds(const Vals& c, const Walk& w, const ColumnRelation& r) {
  const Object& ch = w.objects[size_t(r.child)];
  std::vector<uint32_t> sums(c.size(r.x), 0);
  for (size_t k = 0; k < c.size(r.a); ++k) {
    const uint32_t parent = ch.parent_inst[k];
    if (parent >= sums.size()) return false;
    sums[parent] += c.v[c.begin(r.a) + k];
  }
  for (size_t k = 0; k < sums.size(); ++k)
    if (sums[k] != c.v[c.begin(r.x) + k]) return false;
  return true;
}

bool nonzero(const Vals& c, size_t g) {
  for (size_t k = c.begin(g); k < c.end(g); ++k)
    if (c.v[k]) return true;
  return false;
}

// Relations that hold in this record (searched once per structure, then checked every record).
// At most one relation a column, and no cycles (the codec decodes a relation's sources first): a
// column's own relation may not depend on it, however indirectly.
void find_relations(Query& q, const Vals& c) {
  q.rel.clear();
  const Walk& w = q.w;
  std::vector<std::vector<size_t>> dep(c.l.group_end.size());  // target -> its sources
  std::function<bool(size_t, size_t)> reaches = [&](size_t from, size_t to) {
    if (from == to) return true;
    for (size_t s : dep[from])
      if (reaches(s, to)) return true;
    return false;
  };
  auto acyclic = [&](size_t x, size_t a, long b) { return !reaches(a, x) && (b < 0 || !reaches(size_t(b), x)); };
  auto take = [&](const ColumnRelation& r) {
    q.rel.push_back(r);
    dep[r.x].push_back(r.a);
    if (r.b >= 0) dep[r.x].push_back(size_t(r.b));
  };
  for (size_t oi = 0; oi < w.objects.size(); ++oi) {
    const Object& o = w.objects[oi];
    for (size_t x : o.groups) {
      if (!nonzero(c, x)) continue;
      bool found = false;
      for (size_t ia = 0; ia < o.groups.size() && !found; ++ia)
        for (size_t ib = ia + 1; ib < o.groups.size() && !found; ++ib) {
          const size_t a = o.groups[ia], b = o.groups[ib];
          if (a == x || b == x || c.size(a) != c.size(x) || c.size(b) != c.size(x)) continue;
          if (sum_holds(c, x, a, b) && acyclic(x, a, long(b))) take({x, a, long(b)}), found = true;
        }
      if (found || o.parent_title.empty()) continue;
      for (size_t ci = 0; ci < w.objects.size() && !found; ++ci) {
        const Object& ch = w.objects[ci];
        if (ci == oi || ch.parent_title.empty() || ch.parent_title[0] != o.title) continue;
        for (size_t a : ch.groups) {
          ColumnRelation r{x, a, -1, int(ci)};
          if (c.size(a) == ch.parent_inst.size() && child_sum_holds(c, w, r) && acyclic(x, a, -1)) {
            take(r), found = true;
            break;
          }
        }
      }
    }
  }
}

// log2 of a draw's output width, at least 0.
double lg(double width) { return width > 1 ? std::log2(width) : 0; }

// Synth's draws per tick for the objects holding most bits (synth/dynamics.cpp), from this record's
// increments d (full 32-bit words; the increments fit).
void add_floor(const Walk& w, const Vals& c, const std::vector<uint32_t>& prev, std::map<std::string, Stats>& st) {
  auto col = [&](const std::string& obj, const std::string& name) -> long {
    // 32-bit counters (win2000) have no " lo" word
    const std::string plain = name.size() > 3 && name.ends_with(" lo") ? name.substr(0, name.size() - 3) : name;
    for (size_t g = 0; g < w.cols.size(); ++g)
      if (w.cols[g].cls == obj + " / " + name || w.cols[g].cls == obj + " / " + plain) return long(g);
    return -1;
  };
  auto delta = [&](long g, size_t k) {
    return double(uint32_t(c.v[c.begin(size_t(g)) + k] - prev[c.begin(size_t(g)) + k]));
  };
  auto value = [&](long g, size_t k) { return double(c.v[c.begin(size_t(g)) + k]); };
  auto note = [&](long g, double bits) {
    if (g < 0) return;
    Stats& s = st[w.cols[size_t(g)].cls];
    s.floor_bits += bits;
    s.has_floor = true;
  };
  // Thread (not _Total): the time share tw ~ U(0.5, 1.5) x the process's (one free number per
  // thread: the process share is the sum of its threads'), context switches x U(0.5, 1.5), the
  // state (a coin, p = the thread's busy fraction) and wait reason (0.7/0.3 when waiting).
  // User/privileged split, processor time, the process sums: no draw.
  const long pt = col("Thread", "% Processor Time lo"), ut = col("Thread", "% User Time lo"),
             pv = col("Thread", "% Privileged Time lo"), cs = col("Thread", "Context Switches/sec"),
             ts = col("Thread", "Thread State"), wr = col("Thread", "Thread Wait Reason"),
             pc = col("Thread Details", "User PC lo");
  if (pt >= 0 && ut >= 0 && pv >= 0) {
    const size_t n = c.size(size_t(pt)) - 1;  // _Total last: sums, no draw
    for (size_t k = 0; k < n; ++k) {
      note(pt, 0);
      note(ut, lg(delta(pt, k)));
      note(pv, delta(pt, k) > 0 ? 1 : 0);  // user = floor(share x ratio): the share is known to 1/ratio
      if (cs >= 0) note(cs, lg(delta(cs, k)));
      const double f = std::min(1.0, delta(pt, k) / 1.5e8);
      if (ts >= 0) note(ts, f > 0 && f < 1 ? -f * std::log2(f) - (1 - f) * std::log2(1 - f) : 0);
      if (wr >= 0 && ts >= 0) note(wr, value(ts, k) == 5 ? 0.881 : 0);
    }
  }
  // Thread Details (costly): User PC = start + below(0x10000), 16 bits a thread.
  if (pc >= 0)
    for (size_t k = 0; k < c.size(size_t(pc)); ++k) note(pc, 16);
  // Process (not Idle, not _Total): faults x U(0.5, 1.5); I/O operations x U(0.3, 1.7) (one draw
  // for read, write, other); bytes per read U(4096, 64096), per write U(4096, 34096); working set
  // x exp(0.02 N), virtual bytes x exp(0.005 N), handles + 3 N (N standard normal: a normal's
  // entropy is log2(sigma sqrt(2 pi e)) = log2(4.13 sigma)).
  const long pf = col("Process", "Page Faults/sec"), rop = col("Process", "IO Read Operations/sec lo"),
             wop = col("Process", "IO Write Operations/sec lo"), rb = col("Process", "IO Read Bytes/sec lo"),
             wb = col("Process", "IO Write Bytes/sec lo"), ws = col("Process", "Working Set lo"),
             vb = col("Process", "Virtual Bytes lo"), hc = col("Process", "Handle Count");
  // Derived from the draws above or from the threads: no information of their own.
  const char* derived[] = {"% Processor Time lo",        "% User Time lo",
                           "% Privileged Time lo",       "IO Write Operations/sec lo",
                           "IO Other Operations/sec lo", "IO Data Operations/sec lo",
                           "IO Other Bytes/sec lo",      "IO Data Bytes/sec lo",
                           "Private Bytes lo",           "Page File Bytes lo",
                           "Working Set - Private lo"};
  if (pf >= 0) {
    const size_t n = c.size(size_t(pf)) - 1;
    for (size_t k = 1; k < n; ++k) {
      note(pf, lg(delta(pf, k)));
      if (rop >= 0) note(rop, lg(1.4 * (delta(rop, k) / 0.5 + 1)));
      if (rb >= 0) note(rb, delta(rop, k) > 0 ? std::log2(60000.0) : 0);
      if (wb >= 0 && wop >= 0) note(wb, delta(wop, k) > 0 ? std::log2(30000.0) : 0);
      if (ws >= 0) note(ws, lg(4.13 * 0.02 * value(ws, k)));
      if (vb >= 0) note(vb, lg(4.13 * 0.005 * value(vb, k)));
      if (hc >= 0) note(hc, std::log2(4.13 * 3));
      for (const char* d : derived) note(col("Process", d), 0);
    }
  }
  // Process Address Space (costly): reserved = virtual bytes, free = space - reserved.
  for (const char* d : {"Bytes Reserved lo", "Bytes Free lo"}) note(col("Process Address Space", d), 0);
  // Processor (each CPU): busy fraction N(load, 0.08) of the interval, user share U(0.55, 0.8) of
  // it, interrupts x U(0.9, 1.1), DPC rate below(2 + 20 f).
  const long put = col("Processor", "% User Time lo"), pr = col("Processor", "% Privileged Time lo"),
             in = col("Processor", "Interrupts/sec"), dr = col("Processor", "DPC Rate");
  if (put >= 0 && pr >= 0) {
    const size_t n = c.size(size_t(put)) - 1;
    for (size_t k = 0; k < n; ++k) {
      const double busy = delta(put, k) + delta(pr, k);
      note(put, lg(4.13 * 0.08 * 1.5e8));
      note(pr, lg(0.25 * busy));
      if (in >= 0) note(in, lg(0.2 * delta(in, k)));
      if (dr >= 0) note(dr, lg(2 + 20 * busy / 1.5e8));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const uint32_t hours = argc > 1 ? uint32_t(std::stoul(argv[1])) : 1;
  const std::string profile = argc > 2 ? argv[2] : "2016";
  synth::Spec spec;
  const std::string toml = "[host]\nprofile = \"" + profile + "\"\nduration = \"" + std::to_string(hours) +
                           "h\"\ninterval = \"15s\"\n[processes]\ncount = 200\n";
  if (Status s = synth::parse_spec_toml(toml, spec); !s.ok()) die(s.ToString());
  std::unique_ptr<synth::Synthesizer> gen;
  if (Status s = synth::Synthesizer::create(spec, gen); !s.ok()) die(s.ToString());
  const auto names = counter_names(gen->header());

  std::map<std::string, Query> queries;
  std::map<std::string, Stats> st;
  uint64_t raw = 0, deltas = 0, records = 0, values = 0;
  std::vector<captures::QueryRecord> tick;
  std::vector<uint32_t> cur;
  Bytes structure;
  Layout layout;
  while (!gen->done()) {
    tick.clear();
    if (Status s = gen->next(tick); !s.ok()) die(s.ToString());
    for (const QueryRecord& r : tick) {
      ++records;
      raw += r.payload.size();
      Query& q = queries[r.value_name];
      if (!find_layout(r.payload, layout)) {
        q.hist = 0;
        continue;
      }
      make_structure(r.payload, layout, structure);
      cur.resize(layout.offsets.size());
      for (size_t j = 0; j < cur.size(); ++j) cur[j] = load_le32(&r.payload[layout.offsets[j]]);
      const Vals c{layout, cur};
      if (structure != q.structure || q.hist == 0) {  // a keyframe: a new structure's relations
        q.structure = structure;
        q.layout = layout;
        q.w = walk(r.payload, names);
        find_relations(q, c);
        q.hist = 0;
      } else {
        ++deltas;
        values += cur.size();
        std::vector<bool> predicted(layout.group_end.size(), false);
        for (ColumnRelation& rel : q.rel) {
          ++rel.tried;
          const bool ok = rel.b < 0 ? child_sum_holds(c, q.w, rel) : sum_holds(c, rel.x, rel.a, size_t(rel.b));
          rel.held += ok;
          if (ok) predicted[rel.x] = true;
        }
        for (size_t g = 0; g < layout.group_end.size(); ++g) {
          uint64_t bits[2] = {0, 0};
          for (size_t j = c.begin(g); j < c.end(g); ++j) {
            bits[0] += uint64_t(std::bit_width(zigzag(cur[j] - q.prev[j])));
            if (q.hist >= 2) bits[1] += uint64_t(std::bit_width(zigzag(cur[j] - 2 * q.prev[j] + q.prev2[j])));
          }
          const bool dd = q.hist >= 2 && bits[1] < bits[0];
          Stats& s = st[q.w.cols[g].cls];
          for (size_t j = c.begin(g); j < c.end(g); ++j)
            s.add(zigzag(dd ? cur[j] - 2 * q.prev[j] + q.prev2[j] : cur[j] - q.prev[j]));
          if (predicted[g]) s.cross_n += c.size(g);
        }
        add_floor(q.w, c, q.prev, st);
      }
      q.prev2.swap(q.prev);
      q.prev = cur;
      q.hist = std::min(q.hist + 1, 2);
    }
  }

  // Per class, by current entropy, largest first.
  std::vector<std::pair<std::string, const Stats*>> order;
  for (const auto& [k, s] : st) order.push_back({k, &s});
  std::sort(order.begin(), order.end(),
            [](const auto& a, const auto& b) { return a.second->entropy_bits() > b.second->entropy_bits(); });
  double total_h = 0, total_cross = 0, total_floor = 0, total_bits = 0, unmodelled = 0;
  for (const auto& [k, s] : order) total_h += s->entropy_bits(), total_bits += double(s->bits);
  std::printf(
      "synth %s, %u h / 15 s, 200 processes: %llu records (%llu deltas of an unchanged structure), "
      "%llu raw bytes, %llu values in those deltas\n",
      profile.c_str(), hours, (unsigned long long)records, (unsigned long long)deltas, (unsigned long long)raw,
      (unsigned long long)values);
  std::printf("%-52s %9s %6s %8s %8s %8s %8s\n", "column class", "values", "zero%", "bits/v", "H/v", "cross/v",
              "floor/v");
  for (const auto& [k, s] : order) {
    const double h = s->entropy_bits();
    const double cross = s->n ? h * double(s->n - s->cross_n) / double(s->n) : 0;  // relation-held values cost 0
    const double fl = s->has_floor ? std::min(s->floor_bits, cross) : cross;
    total_cross += cross;
    total_floor += fl;
    if (!s->has_floor) unmodelled += fl;
    if (h / total_h < 0.002) continue;
    std::printf("%-52s %9llu %5.1f%% %8.2f %8.2f %8.2f %8.2f  (%4.1f%% of H)\n", k.c_str(), (unsigned long long)s->n,
                100.0 * double(s->zeros) / double(s->n), double(s->bits) / double(s->n), h / double(s->n),
                cross / double(s->n), fl / double(s->n), 100 * h / total_h);
  }
  const double per_delta = 1.0 / double(deltas) / 8;
  std::printf(
      "total per delta record, bytes: bit widths %.0f, order-0 entropy %.0f, perfect cross-column %.0f, "
      "synth's draws (floor) %.0f; raw %.0f\n",
      total_bits * per_delta, total_h * per_delta, total_cross * per_delta, total_floor * per_delta,
      double(raw) / double(records));
  std::printf(
      "of the floor, columns without a modelled draw (counted at their cross-column entropy): %.0f bytes, "
      "%.1f%%\n",
      unmodelled * per_delta, 100 * unmodelled / total_floor);
  std::printf(
      "ratio to raw if every record cost that (structure and framing not counted): entropy %.1fx, "
      "cross-column %.1fx, floor %.1fx\n",
      double(raw) / double(records) / (total_h * per_delta), double(raw) / double(records) / (total_cross * per_delta),
      double(raw) / double(records) / (total_floor * per_delta));
  std::printf("relations (last structure of each query): column = a + b or = sum of children's column\n");
  for (const auto& [name, q] : queries)
    for (const ColumnRelation& r : q.rel)
      if (q.w.cols[r.x].cls.rfind("Thread", 0) == 0 || q.w.cols[r.x].cls.rfind("Process", 0) == 0)
        std::printf("  %-8s %-44s = %s %s %s  (held %llu of %llu)\n", name.c_str(), q.w.cols[r.x].cls.c_str(),
                    q.w.cols[r.a].cls.c_str(), r.b < 0 ? "summed over children" : "+",
                    r.b < 0 ? "" : q.w.cols[size_t(r.b)].cls.c_str(), (unsigned long long)r.held,
                    (unsigned long long)r.tried);
  return 0;
}
