// A performance extension DLL for tests (provider/README.md): the Open/Collect/Close contract of
// Microsoft's "Implementing OpenPerformanceData", "Implementing CollectPerformanceData"
// (PM_COLLECT_PROC) and "Implementing ClosePerformanceData", with one object as the docs' example
// has it: multi-instance ("alpha", "beta", "gamma"), a raw count and a rate.
//
// Title indices: the object is First Counter, the counters First Counter + 2 and + 4 (helps: First
// Help, + 2, + 4), read from the service's Performance key in Open, as lodctr leaves them there.
// Values, so a reader can check them: "Items" (PERF_COUNTER_RAWCOUNT) = 10 x (n + 1) for instance n;
// "Items/sec" (PERF_COUNTER_BULK_COUNT) counts 100 x (n + 1) per second of the performance counter
// clock, so it formats to that rate between any two samples (the DLL holds no state: Wine loads
// and frees it around every query).
//
// PERFSIM_PROVIDER_MODE chooses how it behaves: normal (unset), "more-data" (Collect answers
// ERROR_MORE_DATA to any buffer under 256 KiB), "fail-open" (Open fails with ERROR_ACCESS_DENIED),
// "slow" (Collect takes 250 ms), "no-wine-fix" (normal, but writing where Wine says: wine_offset()).
#include <windows.h>
#include <winperf.h>

#include <cstring>
#include <cwchar>

namespace {

constexpr wchar_t kServiceKey[] = L"SYSTEM\\CurrentControlSet\\Services\\PerfsimTest\\Performance";
constexpr wchar_t kInstances[][8] = {L"alpha", L"beta", L"gamma"};
constexpr int kNumInstances = 3;
constexpr DWORD kBigBuffer = 256 * 1024;
constexpr DWORD kSlowMs = 250;

DWORD g_first_counter = 0, g_first_help = 0;

// The counter block: its header, the raw count, then the 64-bit rate count (8-aligned).
struct CounterData {
  PERF_COUNTER_BLOCK block;
  DWORD items;
  DWORD pad;
  ULONGLONG items_total;
};
static_assert(sizeof(CounterData) == 24, "counter block layout");

bool mode_is(const char* m) {
  char buf[32] = {};
  const DWORD n = GetEnvironmentVariableA("PERFSIM_PROVIDER_MODE", buf, sizeof buf);
  return n > 0 && n < sizeof buf && std::strcmp(buf, m) == 0;
}

DWORD read_dword(HKEY key, const wchar_t* name, DWORD& out) {
  DWORD size = sizeof out, type = 0;
  const LONG r = RegQueryValueExW(key, name, nullptr, &type, reinterpret_cast<BYTE*>(&out), &size);
  return r != ERROR_SUCCESS ? DWORD(r) : type == REG_DWORD ? ERROR_SUCCESS : ERROR_INVALID_DATA;
}

// Is our object asked for? "Global" and lists naming our index are; "Costly" (ours is not costly)
// and "Foreign" (another machine) are not (Microsoft docs, CollectPerformanceData's lpValueName).
bool wanted(const wchar_t* query) {
  if (!query || !*query || _wcsicmp(query, L"Global") == 0) return true;
  if (_wcsicmp(query, L"Costly") == 0 || _wcsnicmp(query, L"Foreign", 7) == 0) return false;
  for (const wchar_t* p = query; *p;) {
    wchar_t* end = nullptr;
    const unsigned long n = std::wcstoul(p, &end, 10);
    if (end == p) {
      ++p;
      continue;
    }
    if (n == g_first_counter) return true;
    p = end;
  }
  return false;
}

// Wine's query_perf_data (dlls/kernelbase/registry.c, Wine 8.0 and its current source) hands
// Collect a pointer sizeof(PERF_DATA_BLOCK) past where its block's HeaderLength says the first
// object starts (it adds HeaderLength to pdb + 1, not to pdb), with the size left counted from
// HeaderLength: a provider writing where it is told leaves an 88-byte hole before its object and
// writes 88 bytes past the caller's buffer. Under Wine (ntdll exports wine_get_version) this
// provider writes where the block says; on Windows where it is told.
DWORD wine_offset() {
  const HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  const bool wine = ntdll && GetProcAddress(ntdll, "wine_get_version");
  return wine && !mode_is("no-wine-fix") ? DWORD(sizeof(PERF_DATA_BLOCK)) : 0;
}

DWORD align8(DWORD n) { return (n + 7) & ~DWORD(7); }

DWORD object_size() {
  DWORD n = sizeof(PERF_OBJECT_TYPE) + 2 * sizeof(PERF_COUNTER_DEFINITION);
  for (const auto& name : kInstances)
    n += sizeof(PERF_INSTANCE_DEFINITION) + align8(DWORD((std::wcslen(name) + 1) * sizeof(wchar_t))) +
         sizeof(CounterData);
  return n;
}

void define_counter(PERF_COUNTER_DEFINITION& c, DWORD step, DWORD type, DWORD size, DWORD offset) {
  std::memset(&c, 0, sizeof c);
  c.ByteLength = sizeof c;
  c.CounterNameTitleIndex = g_first_counter + step;
  c.CounterHelpTitleIndex = g_first_help + step;
  c.DetailLevel = PERF_DETAIL_NOVICE;
  c.CounterType = type;
  c.CounterSize = size;
  c.CounterOffset = offset;
}

}  // namespace

extern "C" {

__declspec(dllexport) DWORD WINAPI OpenPerfsimTest(LPWSTR) {
  if (mode_is("fail-open")) return ERROR_ACCESS_DENIED;
  HKEY key = nullptr;
  LONG r = RegOpenKeyExW(HKEY_LOCAL_MACHINE, kServiceKey, 0, KEY_READ, &key);
  if (r != ERROR_SUCCESS) return DWORD(r);
  DWORD err = read_dword(key, L"First Counter", g_first_counter);
  if (err == ERROR_SUCCESS) err = read_dword(key, L"First Help", g_first_help);
  RegCloseKey(key);
  return err;
}

__declspec(dllexport) DWORD WINAPI
    CollectPerfsimTest(LPWSTR query, LPVOID* data, LPDWORD total_bytes, LPDWORD num_objects) {
  if (mode_is("slow")) Sleep(kSlowMs);
  const DWORD need = object_size();
  if (!wanted(query)) {
    *total_bytes = 0;
    *num_objects = 0;
    return ERROR_SUCCESS;
  }
  if (*total_bytes < need || (mode_is("more-data") && *total_bytes < kBigBuffer)) {
    *total_bytes = 0;  // the contract: nothing written, ask again with more
    *num_objects = 0;
    return ERROR_MORE_DATA;
  }
  auto* base = static_cast<BYTE*>(*data) - wine_offset();
  std::memset(base, 0, need);
  LARGE_INTEGER now, freq;
  QueryPerformanceCounter(&now);
  QueryPerformanceFrequency(&freq);

  auto* obj = reinterpret_cast<PERF_OBJECT_TYPE*>(base);
  obj->TotalByteLength = need;
  obj->DefinitionLength = sizeof(PERF_OBJECT_TYPE) + 2 * sizeof(PERF_COUNTER_DEFINITION);
  obj->HeaderLength = sizeof(PERF_OBJECT_TYPE);
  obj->ObjectNameTitleIndex = g_first_counter;
  obj->ObjectHelpTitleIndex = g_first_help;
  obj->DetailLevel = PERF_DETAIL_NOVICE;
  obj->NumCounters = 2;
  obj->DefaultCounter = 0;
  obj->NumInstances = kNumInstances;
  obj->CodePage = 0;  // instance names in Unicode
  obj->PerfTime = now;
  obj->PerfFreq = freq;
  auto* defs = reinterpret_cast<PERF_COUNTER_DEFINITION*>(base + sizeof(PERF_OBJECT_TYPE));
  define_counter(defs[0], 2, PERF_COUNTER_RAWCOUNT, sizeof(DWORD), offsetof(CounterData, items));
  define_counter(defs[1], 4, PERF_COUNTER_BULK_COUNT, sizeof(ULONGLONG), offsetof(CounterData, items_total));

  BYTE* at = base + obj->DefinitionLength;
  for (int n = 0; n < kNumInstances; ++n) {
    const DWORD name_bytes = DWORD((std::wcslen(kInstances[n]) + 1) * sizeof(wchar_t));
    auto* inst = reinterpret_cast<PERF_INSTANCE_DEFINITION*>(at);
    inst->ByteLength = sizeof(PERF_INSTANCE_DEFINITION) + align8(name_bytes);
    inst->ParentObjectTitleIndex = 0;
    inst->ParentObjectInstance = 0;
    inst->UniqueID = PERF_NO_UNIQUE_ID;
    inst->NameOffset = sizeof(PERF_INSTANCE_DEFINITION);
    inst->NameLength = name_bytes;
    std::memcpy(at + inst->NameOffset, kInstances[n], name_bytes);
    auto* c = reinterpret_cast<CounterData*>(at + inst->ByteLength);
    c->block.ByteLength = sizeof(CounterData);
    c->items = 10 * DWORD(n + 1);
    const ULONGLONG rate = 100 * ULONGLONG(n + 1), ticks = ULONGLONG(now.QuadPart), f = ULONGLONG(freq.QuadPart);
    c->items_total = ticks / f * rate + ticks % f * rate / f;
    at += inst->ByteLength + sizeof(CounterData);
  }
  *data = at;
  *total_bytes = need;
  *num_objects = 1;
  return ERROR_SUCCESS;
}

__declspec(dllexport) DWORD WINAPI ClosePerfsimTest() { return ERROR_SUCCESS; }

}  // extern "C"
