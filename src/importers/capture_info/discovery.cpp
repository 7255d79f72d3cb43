#include "ascprof/importers/discovery.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>

#include "ascprof/importers/capture_info.hpp"

namespace ascprof::importers {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kApo = "ASCEND_PROFILER_OUTPUT";
constexpr size_t kMaxMissingListed = 100000;

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }


bool iends_with(std::string_view s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  for (size_t i = 0; i < suffix.size(); ++i)
    if (lower(s[s.size() - suffix.size() + i]) != lower(suffix[i])) return false;
  return true;
}

bool istarts_with(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (lower(s[i]) != lower(prefix[i])) return false;
  return true;
}

bool is_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<int64_t> to_int(std::string_view digits) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || p != digits.data() + digits.size()) return std::nullopt;
  return v;
}

bool is_ascend_name(std::string_view name) { return iends_with(name, "_ascend_pt") || iends_with(name, "_ascend_ms"); }

// ^rank[_-]?\d : a folder name that says "I am a rank" (only trusted for direct children of a root).
bool is_rank_like_name(std::string_view name) {
  if (!istarts_with(name, "rank")) return false;
  size_t i = 4;
  if (i < name.size() && (name[i] == '_' || name[i] == '-')) ++i;
  return i < name.size() && name[i] >= '0' && name[i] <= '9';
}

std::string error_text(const std::error_code& ec) { return ec.message(); }

struct Entry {
  std::string name;
  bool is_dir = false;       // following symlinks
  bool is_file = false;      // regular file, following symlinks
  bool is_symlink = false;
  bool dangling = false;     // symlink whose target does not exist
  std::string status_error;  // why the entry's status could not be read
};

// Lists `dir` sorted by name. Errors are returned as text, not thrown.
bool list_dir(const fs::path& dir, std::vector<Entry>* out, std::string* error) {
  out->clear();
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    *error = error_text(ec);
    return false;
  }
  for (fs::directory_iterator end; it != end; it.increment(ec)) {
    if (ec) break;
    Entry e;
    e.name = it->path().filename().string();
    std::error_code sec;
    e.is_symlink = it->is_symlink(sec);
    std::error_code tec;
    fs::file_status st = fs::status(it->path(), tec);
    if (tec) {
      if (e.is_symlink && (tec == std::errc::no_such_file_or_directory)) e.dangling = true;
      else e.status_error = error_text(tec);
    } else {
      e.is_dir = fs::is_directory(st);
      e.is_file = fs::is_regular_file(st);
    }
    out->push_back(std::move(e));
  }
  if (ec) {
    *error = error_text(ec);
    return false;
  }
  std::sort(out->begin(), out->end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
  return true;
}

const Entry* find_entry(const std::vector<Entry>& entries, std::string_view name) {
  auto it = std::lower_bound(entries.begin(), entries.end(), name,
                             [](const Entry& e, std::string_view n) { return e.name < n; });
  return (it != entries.end() && it->name == name) ? &*it : nullptr;
}

// N of ascend_pytorch_profiler_<N>.db; -1 for the single-card ascend_pytorch_profiler.db; nullopt
// for any other name.
std::optional<int64_t> rank_from_profiler_db_name(std::string_view name) {
  static constexpr std::string_view kPrefix = "ascend_pytorch_profiler";
  if (name.size() < kPrefix.size() + 3 || name.substr(0, kPrefix.size()) != kPrefix ||
      name.substr(name.size() - 3) != ".db")
    return std::nullopt;
  std::string_view mid = name.substr(kPrefix.size(), name.size() - kPrefix.size() - 3);
  if (mid.empty()) return -1;
  if (mid.front() != '_' || mid.size() < 2 || mid.size() > 10) return std::nullopt;
  int64_t n = 0;
  for (const char c : mid.substr(1)) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

bool is_profiler_db_name(std::string_view name) { return rank_from_profiler_db_name(name).has_value(); }

bool is_profiler_info_name(std::string_view name) {
  return name == "profiler_info.json" || rank_from_profiler_info_name(name).has_value();
}

bool has_rank_evidence(const std::vector<Entry>& entries) {
  for (const Entry& e : entries) {
    if (e.is_file && (e.name == "kernel_details.csv" || is_profiler_info_name(e.name) || is_profiler_db_name(e.name)))
      return true;
    if (e.is_dir && e.name == kApo) return true;
  }
  return false;
}

std::string sanitize_id(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    out += alnum ? lower(c) : '_';
  }
  return out;
}

// The reference's infer_rank_id rules on a folder name (see discovery.hpp for how ours differ).
struct NameRank {
  std::string id;
  std::optional<int64_t> number;
  std::optional<int32_t> device;
};

std::optional<NameRank> rank_from_dir_name(const std::string& name) {
  static const std::regex kWhole(R"(^(rank|device)[_-]?(\d+)_.+_ascend_pt$)", std::regex::icase);
  static const std::regex kDpRank(R"(dp\d+_pp\d+_tp\d+_dcp\d+_ep\d+_rank(\d+))", std::regex::icase);
  static const std::regex kRank(R"(rank[_-]?(\d+))", std::regex::icase);
  static const std::regex kDevice(R"(device[_-]?(\d+))", std::regex::icase);
  std::smatch m;
  auto numeric = [](const std::string& digits) -> std::optional<NameRank> {
    auto n = to_int(digits);
    if (!n) return std::nullopt;
    return NameRank{rank_label(*n), n, std::nullopt};
  };
  auto device = [](std::string id, const std::string& digits) -> std::optional<NameRank> {
    NameRank r{std::move(id), std::nullopt, std::nullopt};
    if (auto n = to_int(digits); n && *n <= INT32_MAX) r.device = static_cast<int32_t>(*n);
    return r;
  };
  if (std::regex_search(name, m, kWhole)) {
    if (istarts_with(name, "rank")) return numeric(m[2].str());
    return device(sanitize_id(name), m[2].str());
  }
  if (std::regex_search(name, m, kDpRank)) return numeric(m[1].str());
  if (std::regex_search(name, m, kRank)) return numeric(m[1].str());
  if (std::regex_search(name, m, kDevice)) return device(sanitize_id(m[0].str()), m[1].str());
  return std::nullopt;
}

// {worker}_{pid}_{YYYYmmddHHMMSSfff}_ascend_pt: the 3rd '_'-field from the end.
std::optional<int64_t> folder_timestamp(std::string_view name) {
  if (!is_ascend_name(name)) return std::nullopt;
  std::string_view rest = name.substr(0, name.size() - std::string_view("_ascend_pt").size());
  size_t us = rest.rfind('_');
  if (us == std::string_view::npos) return std::nullopt;
  std::string_view field = rest.substr(us + 1);
  if (!is_digits(field) || field.size() > 18) return std::nullopt;
  return to_int(field);
}

struct Candidate {
  fs::path path;
  std::vector<Entry> entries;
  std::string error;  // non-empty: a failed rank folder
  fs::path kernel_details_override;  // the root was this kernel_details.csv file
};

class RankWalker {
 public:
  explicit RankWalker(Stats& stats) : stats_(stats) {}

  // Returns false only when the root itself cannot be used (error set).
  bool run(const fs::path& root, std::string* error) {
    std::error_code ec;
    fs::file_status st = fs::status(root, ec);
    if (ec || !fs::exists(st)) {
      *error = ec ? error_text(ec) : "does not exist";
      return false;
    }
    if (fs::is_regular_file(st)) {
      fs::path dir = root.parent_path();
      if (dir.empty()) dir = ".";
      if (dir.filename() == kApo && dir.has_parent_path()) dir = dir.parent_path();
      Candidate c;
      c.path = dir;
      c.kernel_details_override = root;
      std::string lerr;
      if (!list_dir(dir, &c.entries, &lerr)) c.error = "cannot list folder: " + lerr;
      out.push_back(std::move(c));
      return true;
    }
    if (!fs::is_directory(st)) {
      *error = "not a folder or a kernel_details.csv file";
      return false;
    }
    std::vector<Entry> entries;
    std::string lerr;
    if (!list_dir(root, &entries, &lerr)) {
      *error = "cannot list folder: " + lerr;
      return false;
    }
    mark_visited(root);
    if (is_ascend_name(root.filename().string()) || has_rank_evidence(entries)) {
      out.push_back(Candidate{root, std::move(entries), {}, {}});
      return true;
    }
    descend(root, entries, 0);
    return true;
  }

  std::vector<Candidate> out;

 private:
  bool mark_visited(const fs::path& dir) {
    std::error_code ec;
    fs::path canon = fs::canonical(dir, ec);
    return visited_.insert(ec ? fs::absolute(dir).lexically_normal().string() : canon.string()).second;
  }

  void descend(const fs::path& dir, const std::vector<Entry>& entries, int depth) {
    // Real folders before symlinks, so a folder reached both ways is named by its real path.
    std::vector<const Entry*> order;
    order.reserve(entries.size());
    for (const Entry& e : entries)
      if (!e.is_symlink) order.push_back(&e);
    for (const Entry& e : entries)
      if (e.is_symlink) order.push_back(&e);
    for (const Entry* ep : order) {
      const Entry& e = *ep;
      fs::path child = dir / e.name;
      const bool name_says_rank = is_ascend_name(e.name) || (depth == 0 && is_rank_like_name(e.name));
      if (e.is_dir) {
        if (depth + 1 > kMaxRankSearchDepth) {
          stats_.note(Stat::disc_depth_limit, child.string() + ": deeper than " +
                                                  std::to_string(kMaxRankSearchDepth) + " levels; not searched");
          continue;
        }
        visit(child, e.name, depth + 1, name_says_rank);
      } else if (name_says_rank && (e.dangling || !e.status_error.empty() || is_ascend_name(e.name))) {
        // Something named like a rank folder that is not one: say so rather than drop it silently.
        Candidate c;
        c.path = child;
        c.error = e.dangling ? "dangling symlink (target does not exist)"
                  : !e.status_error.empty() ? "cannot read: " + e.status_error
                                            : "not a folder";
        out.push_back(std::move(c));
      }
    }
  }

  void visit(const fs::path& dir, const std::string& name, int depth, bool name_says_rank) {
    if (!mark_visited(dir)) {
      stats_.note(Stat::disc_revisited_dir, dir.string() + ": already visited through another path (symlink); skipped");
      return;
    }
    std::vector<Entry> entries;
    std::string lerr;
    if (!list_dir(dir, &entries, &lerr)) {
      if (name_says_rank) {
        out.push_back(Candidate{dir, {}, "cannot list folder: " + lerr, {}});
      } else {
        stats_.note(Stat::disc_unreadable_dir, dir.string() + ": cannot list folder: " + lerr);
      }
      return;
    }
    if (name_says_rank || has_rank_evidence(entries)) {
      Candidate c{dir, std::move(entries), {}, {}};
      if (!has_rank_evidence(c.entries))
        c.error = "no ASCEND_PROFILER_OUTPUT/, kernel_details.csv or profiler_info*.json in the folder";
      out.push_back(std::move(c));
      return;
    }
    descend(dir, entries, depth);
  }

  Stats& stats_;
  std::unordered_set<std::string> visited_;
};

// Looks `name` up in the folder itself, then in ASCEND_PROFILER_OUTPUT/.
fs::path find_file(const fs::path& dir, const std::vector<Entry>& entries, const fs::path& apo,
                   const std::vector<Entry>& apo_entries, std::string_view name) {
  if (const Entry* e = find_entry(entries, name); e && e->is_file) return dir / e->name;
  if (const Entry* e = find_entry(apo_entries, name); e && e->is_file) return apo / e->name;
  // Present under that name but not a readable regular file (a folder, a dangling symlink, a status
  // error): returned anyway, so that reading it fails the rank with an io error naming the path
  // instead of the rank being analysed silently without that file.
  if (const Entry* e = find_entry(apo_entries, name); e && !e->is_file) return apo / e->name;
  if (const Entry* e = find_entry(entries, name); e && !e->is_file) return dir / e->name;
  return {};
}

// The reference's last resort for kernel_details.csv: the first match below the folder. Symlinks
// are not followed and PROF_*/FRAMEWORK raw-data trees are skipped (they never hold it).
fs::path find_kernel_details_below(const fs::path& dir) {
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  if (ec) return {};
  std::vector<fs::path> hits;
  for (fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
    if (ec) break;
    const std::string name = it->path().filename().string();
    std::error_code sec;
    if (it->is_directory(sec)) {
      if (it.depth() >= 2 || istarts_with(name, "PROF_") || name == "FRAMEWORK") it.disable_recursion_pending();
      continue;
    }
    if (name == "kernel_details.csv" && it->is_regular_file(sec)) hits.push_back(it->path());
  }
  if (hits.empty()) return {};
  return *std::min_element(hits.begin(), hits.end());
}

std::optional<int32_t> device_from_prof(const fs::path& dir, const std::vector<Entry>& entries) {
  for (const Entry& e : entries) {
    if (!e.is_dir || !istarts_with(e.name, "PROF_")) continue;
    std::vector<Entry> sub;
    std::string err;
    if (!list_dir(dir / e.name, &sub, &err)) continue;
    for (const Entry& s : sub) {
      if (!s.is_dir || s.name.rfind("device_", 0) != 0) continue;
      if (auto n = to_int(std::string_view(s.name).substr(7)); n && *n >= 0 && *n <= INT32_MAX)
        return static_cast<int32_t>(*n);
    }
  }
  return std::nullopt;
}

uint64_t file_size_or_zero(const fs::path& p) {
  if (p.empty()) return 0;
  std::error_code ec;
  auto n = fs::file_size(p, ec);
  return ec ? 0 : static_cast<uint64_t>(n);
}

// Fills everything but the rank id. Returns the chosen profiler_info file's rank (from its name).
void describe(const Candidate& c, RankFolder* r, Stats& stats) {
  r->path = c.path;
  r->rank_dir = c.path.filename().string();
  r->folder_timestamp = folder_timestamp(r->rank_dir);
  std::vector<Entry> apo_entries;
  const fs::path apo = c.path / kApo;
  if (const Entry* e = find_entry(c.entries, kApo); e && e->is_dir) {
    std::string err;
    if (!list_dir(apo, &apo_entries, &err))
      stats.note(Stat::disc_unreadable_dir, apo.string() + ": cannot list folder: " + err);
  }
  RankFiles& f = r->files;
  f.kernel_details = c.kernel_details_override.empty()
                         ? find_file(c.path, c.entries, apo, apo_entries, "kernel_details.csv")
                         : c.kernel_details_override;
  if (f.kernel_details.empty()) f.kernel_details = find_kernel_details_below(c.path);
  f.trace_view = find_file(c.path, c.entries, apo, apo_entries, "trace_view.json");
  f.communication = find_file(c.path, c.entries, apo, apo_entries, "communication.json");
  f.communication_matrix = find_file(c.path, c.entries, apo, apo_entries, "communication_matrix.json");
  f.step_trace_time = find_file(c.path, c.entries, apo, apo_entries, "step_trace_time.csv");
  f.profiler_metadata = find_file(c.path, c.entries, apo, apo_entries, "profiler_metadata.json");
  f.op_statistic = find_file(c.path, c.entries, apo, apo_entries, "op_statistic.csv");
  f.api_statistic = find_file(c.path, c.entries, apo, apo_entries, "api_statistic.csv");
  f.analysis_db = find_file(c.path, c.entries, apo, apo_entries, "analysis.db");
  // The rank's database: the numbered one with the lowest N, else the single-card name.
  std::optional<int64_t> best_db;
  for (const std::vector<Entry>* place : {static_cast<const std::vector<Entry>*>(&apo_entries), &c.entries}) {
    for (const Entry& e : *place) {
      const auto n = e.is_file ? rank_from_profiler_db_name(e.name) : std::nullopt;
      if (!n || (best_db && *best_db >= 0 && (*n < 0 || *n >= *best_db))) continue;
      best_db = n;
      f.profiler_db = (place == &apo_entries ? apo : c.path) / e.name;
    }
    if (best_db) break;
  }

  // profiler_info_<N>.json with the lowest N; profiler_info.json only when there is none.
  std::optional<int64_t> best;
  fs::path best_path, plain;
  size_t numbered = 0;
  auto scan = [&](const fs::path& dir, const std::vector<Entry>& entries) {
    for (const Entry& e : entries) {
      if (!e.is_file) continue;
      if (auto n = rank_from_profiler_info_name(e.name)) {
        ++numbered;
        if (!best || *n < *best) {
          best = n;
          best_path = dir / e.name;
        }
      } else if (e.name == "profiler_info.json" && plain.empty()) {
        plain = dir / e.name;
      }
    }
  };
  scan(c.path, c.entries);
  if (!best && plain.empty()) scan(apo, apo_entries);
  if (numbered > 1)
    stats.note(Stat::info_multiple_profiler_info,
               c.path.string() + ": " + std::to_string(numbered) + " profiler_info_<N>.json files; used " +
                   best_path.filename().string());
  f.profiler_info = best ? best_path : plain;

  for (const fs::path* p : {&f.kernel_details, &f.trace_view, &f.communication, &f.communication_matrix,
                            &f.step_trace_time, &f.profiler_info, &f.profiler_metadata, &f.op_statistic,
                            &f.api_statistic, &f.profiler_db, &f.analysis_db})
    r->input_bytes += file_size_or_zero(*p);
  r->device_id = device_from_prof(c.path, c.entries);
}

// Rank id from profiler_info name, then body, then folder name. False when only the ordinal is left.
bool assign_rank_id(RankFolder* r, Stats& stats, std::string* why_not) {
  if (!r->files.profiler_info.empty()) {
    if (auto n = rank_from_profiler_info_name(r->files.profiler_info.filename().string())) {
      r->rank_number = n;
      r->rank_id = rank_label(*n);
      r->id_source = RankIdSource::kInfoFileName;
      return true;
    }
    auto info = read_profiler_info(r->files.profiler_info, stats);
    if (info.ok() && info->rank_id_from_body) {
      r->rank_number = info->rank_id_from_body;
      r->rank_id = rank_label(*info->rank_id_from_body);
      r->id_source = RankIdSource::kInfoBody;
      stats.note(Stat::info_rank_from_body,
                 r->files.profiler_info.string() + ": rank " + r->rank_id + " from the \"rank_id\" field");
      return true;
    }
    *why_not = info.ok() ? "profiler_info.json has no rank_id" : info.status().message();
  } else {
    *why_not = "no profiler_info*.json";
  }
  if (!r->files.profiler_db.empty()) {
    if (auto n = rank_from_profiler_db_name(r->files.profiler_db.filename().string()); n && *n >= 0) {
      r->rank_number = n;
      r->rank_id = rank_label(*n);
      r->id_source = RankIdSource::kDbFileName;
      return true;
    }
  }
  if (auto nr = rank_from_dir_name(r->rank_dir)) {
    r->rank_id = nr->id;
    r->rank_number = nr->number;
    if (!r->device_id) r->device_id = nr->device;
    r->id_source = RankIdSource::kDirName;
    stats.note(Stat::info_rank_from_dirname,
               r->path.string() + ": rank id \"" + r->rank_id + "\" from the folder name (" + *why_not + ")");
    return true;
  }
  return false;
}

bool newer(const RankFolder& a, const RankFolder& b) {
  if (a.folder_timestamp != b.folder_timestamp) {
    if (!b.folder_timestamp) return true;
    if (!a.folder_timestamp) return false;
    return *a.folder_timestamp > *b.folder_timestamp;
  }
  return a.path.string() > b.path.string();
}

std::string ts_text(const std::optional<int64_t>& ts) { return ts ? std::to_string(*ts) : "unknown"; }

bool rank_less(const RankFolder& a, const RankFolder& b) {
  if (a.rank_number.has_value() != b.rank_number.has_value()) return a.rank_number.has_value();
  if (a.rank_number && *a.rank_number != *b.rank_number) return *a.rank_number < *b.rank_number;
  if (a.rank_id != b.rank_id) return a.rank_id < b.rank_id;
  return a.path.string() < b.path.string();
}

}  // namespace

const char* rank_id_source_name(RankIdSource s) {
  switch (s) {
    case RankIdSource::kInfoFileName: return "profiler_info_name";
    case RankIdSource::kInfoBody: return "profiler_info_body";
    case RankIdSource::kDbFileName: return "profiler_db_name";
    case RankIdSource::kDirName: return "dir_name";
    case RankIdSource::kOrdinal: return "ordinal";
  }
  return "unknown";
}

Result<CaptureRoot> discover_capture_root(const fs::path& root, Stats& stats) {
  CaptureRoot out;
  out.root = root;
  RankWalker walker(stats);
  std::string error;
  if (!walker.run(root, &error)) return file_error(ErrorCode::kIo, root.string(), "", error);

  // Ordinals follow the reference: position among all rank folders sorted by path.
  std::vector<Candidate>& cands = walker.out;
  std::sort(cands.begin(), cands.end(),
            [](const Candidate& a, const Candidate& b) { return a.path.string() < b.path.string(); });

  std::vector<RankFolder> ok;
  for (size_t i = 0; i < cands.size(); ++i) {
    const Candidate& c = cands[i];
    RankFolder r;
    if (!c.error.empty()) {
      r.path = c.path;
      r.rank_dir = c.path.filename().string();
      r.folder_timestamp = folder_timestamp(r.rank_dir);
      r.error = c.error;
      if (auto nr = rank_from_dir_name(r.rank_dir)) {
        r.rank_id = nr->id;
        r.rank_number = nr->number;
        r.device_id = nr->device;
        r.id_source = RankIdSource::kDirName;
      }
      stats.note(Stat::disc_rank_failed, c.path.string() + ": " + c.error);
      out.failed.push_back(std::move(r));
      continue;
    }
    describe(c, &r, stats);
    std::string why_not;
    if (!assign_rank_id(&r, stats, &why_not)) {
      r.rank_id = "rank_" + std::to_string(i);
      r.id_source = RankIdSource::kOrdinal;
      stats.note(Stat::info_rank_from_ordinal, c.path.string() + ": rank id \"" + r.rank_id +
                                                   "\" from the folder's position (" + why_not +
                                                   ", no rank in the folder name)");
    }
    ok.push_back(std::move(r));
  }

  // One folder per rank id: newest folder timestamp, then later path.
  std::map<std::string, size_t> winner;  // rank_id -> index in ok
  std::vector<bool> dropped(ok.size(), false);
  for (size_t i = 0; i < ok.size(); ++i) {
    auto [it, inserted] = winner.emplace(ok[i].rank_id, i);
    if (inserted) continue;
    size_t keep = it->second, lose = i;
    if (newer(ok[i], ok[keep])) std::swap(keep, lose);
    it->second = keep;
    dropped[lose] = true;
    const RankFolder& k = ok[keep];
    const RankFolder& l = ok[lose];
    DuplicateRank d;
    d.rank_id = k.rank_id;
    d.kept = k.path;
    d.dropped = l.path;
    if (k.folder_timestamp != l.folder_timestamp)  // then the kept one has the (larger) timestamp
      d.reason = l.folder_timestamp ? "folder timestamp " + ts_text(l.folder_timestamp) + " older than " +
                                          ts_text(k.folder_timestamp)
                                    : "no folder timestamp; the kept folder has " + ts_text(k.folder_timestamp);
    else
      d.reason = std::string(k.folder_timestamp ? "same folder timestamp " + ts_text(k.folder_timestamp)
                                                : "no folder timestamp") +
                 "; kept the later path";
    stats.note(Stat::disc_duplicate_rank,
               d.rank_id + ": kept " + d.kept.string() + ", ignored " + d.dropped.string() + " (" +
                   d.reason + ")");
    out.duplicates.push_back(std::move(d));
  }
  for (size_t i = 0; i < ok.size(); ++i)
    if (!dropped[i]) out.ranks.push_back(std::move(ok[i]));
  std::sort(out.ranks.begin(), out.ranks.end(), rank_less);
  std::sort(out.failed.begin(), out.failed.end(), rank_less);

  std::set<int64_t> numbers;
  for (const auto* list : {&out.ranks, &out.failed})
    for (const RankFolder& r : *list)
      if (r.rank_number) numbers.insert(*r.rank_number);
  if (numbers.size() >= 2) {
    const int64_t lo = *numbers.begin(), hi = *numbers.rbegin();
    uint64_t gaps = 0;
    for (int64_t n = lo; n <= hi; ++n) {
      if (numbers.count(n)) continue;
      ++gaps;
      if (out.missing_rank_ids.size() < kMaxMissingListed) out.missing_rank_ids.push_back(n);
      if (gaps > kMaxMissingListed) break;
    }
    if (gaps > 0) {
      stats.inc(Stat::disc_missing_rank, gaps - 1);
      stats.note(Stat::disc_missing_rank, root.string() + ": " + std::to_string(gaps) +
                                              " rank id(s) missing between " + std::to_string(lo) + " and " +
                                              std::to_string(hi) + ", first " +
                                              std::to_string(out.missing_rank_ids.front()));
    }
  }

  if (out.ranks.empty() && out.failed.empty())
    return file_error(ErrorCode::kSchema, root.string(), "",
                      "no rank folders found (looked for *_ascend_pt / *_ascend_ms / rank<N> folders and folders "
                      "holding kernel_details.csv, ASCEND_PROFILER_OUTPUT/ or profiler_info*.json, up to " +
                          std::to_string(kMaxRankSearchDepth) + " levels deep)");
  return out;
}

std::string rank_label(int64_t rank_number) { return "rank" + std::to_string(rank_number); }

// ---- sweep root discovery (reference §2.10) ----
namespace {

bool skipped_component(std::string_view name) {
  return name.find("profile_analysis") != std::string_view::npos ||
         name.find("ascend_profile_framework") != std::string_view::npos ||
         name.find("__pycache__") != std::string_view::npos || name.find(".bak") != std::string_view::npos ||
         name.rfind("bak_", 0) == 0;
}

bool looks_like_rank_dir(const std::string& name) {
  // The reference has ^rank\d+ and _rank\d+; we also accept rank_3 / rank-3 ("test_rank_0" is a
  // rank folder of a real 2023 capture and would otherwise become a root of its own).
  static const std::regex kRankPrefix(R"(^rank[_-]?\d+)", std::regex::icase);
  static const std::regex kRankInfix(R"(_rank[_-]?\d+)", std::regex::icase);
  static const std::regex kDpPrefix(R"(^dp\d+_pp\d+_tp\d+)", std::regex::icase);
  return std::regex_search(name, kRankPrefix) || std::regex_search(name, kRankInfix) ||
         std::regex_search(name, kDpPrefix) || is_ascend_name(name);
}

class SweepWalker {
 public:
  explicit SweepWalker(Stats& stats) : stats_(stats) {}

  void walk(const fs::path& dir, int depth) {
    std::error_code ec;
    fs::path canon = fs::canonical(dir, ec);
    if (!visited_.insert(ec ? dir.lexically_normal().string() : canon.string()).second) {
      stats_.note(Stat::disc_revisited_dir, dir.string() + ": already visited through another path (symlink); skipped");
      return;
    }
    std::vector<Entry> entries;
    std::string err;
    if (!list_dir(dir, &entries, &err)) {
      stats_.note(Stat::disc_unreadable_dir, dir.string() + ": cannot list folder: " + err);
      return;
    }
    const Entry* kd = find_entry(entries, "kernel_details.csv");
    const Entry* apo = find_entry(entries, kApo);
    bool is_rank = false;
    if (kd && kd->is_file) {
      add_rank_dir(dir.filename() == kApo ? dir.parent_path() : dir);
      is_rank = true;
    }
    if (apo && apo->is_dir && dir.filename() != kApo) {
      std::vector<Entry> sub;
      std::string e2;
      if (list_dir(dir / kApo, &sub, &e2)) {
        bool holds = false;
        for (const Entry& k : sub) holds = holds || (k.is_file && (k.name == "kernel_details.csv" || is_profiler_db_name(k.name)));
        if (holds) {
          add_rank_dir(dir);
          is_rank = true;
        }
      }
    }
    if (is_rank) return;
    for (const Entry& e : entries) {
      if (!e.is_dir || skipped_component(e.name)) continue;
      if (depth + 1 > kMaxSweepSearchDepth) {
        stats_.note(Stat::disc_depth_limit, (dir / e.name).string() + ": deeper than " +
                                                std::to_string(kMaxSweepSearchDepth) + " levels; not searched");
        continue;
      }
      walk(dir / e.name, depth + 1);
    }
  }

  std::set<std::string> roots;

 private:
  void add_rank_dir(const fs::path& rank_dir) {
    const fs::path parent = rank_dir.parent_path();
    const std::string parent_name = parent.filename().string();
    fs::path root;
    if (!parent.empty() && (parent_name == "vllm_profile" || parent_name == "vllm_profile_rank")) root = parent;
    else if (!parent.empty() && looks_like_rank_dir(rank_dir.filename().string())) root = parent;
    else root = rank_dir;
    roots.insert(root.lexically_normal().string());
  }

  Stats& stats_;
  std::unordered_set<std::string> visited_;
};

}  // namespace

Result<std::vector<fs::path>> discover_capture_roots(const std::vector<fs::path>& search_roots, Stats& stats) {
  SweepWalker walker(stats);
  for (const fs::path& sr : search_roots) {
    std::error_code ec;
    if (!fs::is_directory(sr, ec))
      return file_error(ErrorCode::kIo, sr.string(), "", ec ? ec.message() : "not a folder");
    walker.walk(sr, 0);
  }
  std::vector<fs::path> out;
  out.reserve(walker.roots.size());
  for (const std::string& r : walker.roots) out.emplace_back(r);
  return out;
}

}  // namespace ascprof::importers
