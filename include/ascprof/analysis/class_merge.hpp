#pragma once
/// The class summaries merged up a tree of processes (issue 22): block / layer / step class
/// partials of any subset of a root's ranks fold into one ClassPartialsMerge, merges of disjoint
/// subsets merge in any order and grouping, and the finished merge equals merge_class_partials over
/// every rank in rank order, bit for bit. What makes it exact:
///  - integer counts and sums add (associative); "first seen" entries carry where they were first
///    seen (rank ordinal, class position, entry position) and are ordered by it at the finish;
///  - the double sums (comm share, pipeline µs, step ratios) are kept as one value per holding rank
///    and added in rank order at the finish, as the single pass adds them (8 bytes per rank, class
///    and value);
///  - the members' walls, the only part that grows with members, never leave the process that
///    analysed the rank (ClassWalls): the p50 / p90 are exact order statistics selected across the
///    processes by bisection on the value range (select_order_statistics: 64 sums of one count per
///    statistic, whatever the member count).
/// No MPI here: the caller passes how counts are summed over the processes.
#include <array>
#include <compare>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "ascprof/analysis/class_summary.hpp"
#include "ascprof/analysis/wall_set.hpp"

namespace ascprof::analysis {

/// Where an entry was first seen in one pass over the ranks' partials in rank order: the rank
/// ordinal, the class's position in the rank's list, the entry's position in the class's list.
struct SeenAt {
  uint32_t rank = UINT32_MAX, entry = 0, item = 0;
  auto operator<=>(const SeenAt&) const = default;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & rank & entry & item;
  }
};

/// A first-seen union whose parts arrive in any order: sorting by `at` restores the single pass's order.
template <class T>
struct SeenUnion {
  struct Item {
    T value;
    SeenAt at;
    template <class Ar>
    void serialize(Ar& ar, unsigned /*version*/) {
      ar & value & at;
    }
  };
  std::vector<Item> items;
  std::unordered_map<std::string, uint32_t> index;  ///< key -> item; rebuilt after a load (not serialised)

  /// The item of `key`, created when absent; its `at` becomes the earlier of the two.
  T& at(const std::string& key, SeenAt seen, bool* fresh);

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & items;
  }
};

enum class ClassKind : uint8_t { kBlock = 0, kLayer = 1, kStep = 2 };

/// What every class merge holds, whatever its kind.
struct ClassMergeCommon {
  SeenAt first;                  ///< the class's first holder (its metadata is that holder's)
  std::vector<SeenAt> holders;   ///< every (rank, class position) holding the class, any order
  std::vector<double> reals;     ///< per holder, the kind's double sums (summed in holder order at the finish)
  uint64_t members = 0;
  int64_t wall_sum_ns = 0, busy_sum_ns = 0, bubble_sum_ns = 0;
  double wall_p50_ms = 0, wall_p90_ms = 0;  ///< set by set_wall_quantiles before the finish

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & first & holders & reals & members & wall_sum_ns & busy_sum_ns & bubble_sum_ns & wall_p50_ms & wall_p90_ms;
  }
};

struct BlockClassMerge {
  ClassMergeCommon common;
  BlockClassPartial meta;  ///< the first holder's partial without its per-member values
  int64_t comm_duration_sum_ns = 0;
  bool pipeline_signal = false;
  SeenUnion<NamedSum> families, op_types;
  SeenUnion<ClassTopOp> ops;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & common & meta & comm_duration_sum_ns & pipeline_signal & families & op_types & ops;
  }
};

struct LayerClassMerge {
  ClassMergeCommon common;
  LayerClassPartial meta;
  SeenUnion<NamedSum> kinds;
  SeenUnion<ClassTopOp> ops;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & common & meta & kinds & ops;
  }
};

struct StepClassMerge {
  ClassMergeCommon common;
  StepClassPartial meta;
  uint64_t anatomy_count = 0;
  int64_t head_sum_ns = 0, main_sum_ns = 0, tail_sum_ns = 0;
  SeenUnion<NamedSum> layer_classes;
  SeenUnion<ClassTopOp> ops;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & common & meta & anatomy_count & head_sum_ns & main_sum_ns & tail_sum_ns & layer_classes & ops;
  }
};

/// The members' walls of a root's classes on this process, by kind and class id (never sent).
struct ClassWalls {
  std::array<std::unordered_map<std::string, WallSet>, 3> by_kind;  ///< compact: ~2 bytes a wall (wall_set.hpp)
  WallSet* find(ClassKind kind, const std::string& class_id);
};

/// One class whose wall quantiles are wanted: the same list, in the same order, on every process.
struct WallRequest {
  int32_t root = 0;
  ClassKind kind = ClassKind::kBlock;
  std::string class_id;
  uint64_t members = 0;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & root & kind & class_id & members;
  }
};

/// The class partials of some of a root's ranks.
struct ClassPartialsMerge {
  SeenUnion<BlockClassMerge> blocks;
  SeenUnion<LayerClassMerge> layers;
  SeenUnion<StepClassMerge> steps;
  uint32_t pipeline_fields = 0;  ///< PipelineRules fields (the width of a block holder's reals)

  /// Folds rank `rank`'s partials (its ordinal: the rank order of the root); their walls move into `walls`.
  void fold(uint32_t rank, ClassPartials partials, ClassWalls& walls, const knowledge::Knowledge& kb);
  /// Adds the merge of a disjoint set of ranks.
  void merge(ClassPartialsMerge&& other);
  /// Every class of the merge, in the merge's order (root set to `root`).
  std::vector<WallRequest> wall_requests(int32_t root) const;
  /// Takes the p50 / p90 (ms) of every class, two per wall_requests() entry, in its order.
  void set_wall_quantiles(std::span<const double> p50_p90);
  /// The three tables (set_wall_quantiles first). Consumes the merge.
  ClassSummaries finish(const knowledge::Knowledge& kb);

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & blocks & layers & steps & pipeline_fields;
  }
};

/// Adds a vector of counts element-wise over the processes (identity in one process).
using SumOverProcesses = std::function<void(std::vector<uint64_t>&)>;

/// One order statistic wanted: the k-th smallest (0-based) value of set `set` over all processes.
struct OrderRequest {
  uint32_t set = 0;
  uint64_t k = 0;
};

/// Exact order statistics of values spread over processes (`sets[i]`: this process's values of set
/// i, ascending). Bisection on the 64-bit value range, all requests at once: at most 64 calls of
/// `sum` (the same on every process), each with one count per request. Every process returns the
/// values. A request with k past its set's total count gets INT64_MAX.
std::vector<int64_t> select_order_statistics(std::span<const std::span<const int64_t>> sets,
                                             std::span<const OrderRequest> wanted, const SumOverProcesses& sum);
/// The same over sets this process counts itself: `count_le(set, x)` = its values of `set` that are <= x.
std::vector<int64_t> select_order_statistics(size_t set_count, const std::function<uint64_t(uint32_t set, int64_t x)>& count_le,
                                             std::span<const OrderRequest> wanted, const SumOverProcesses& sum);

/// The p50 and p90 (ms, sorted_quantile's interpolation) of every request's walls over all
/// processes: two values per request. `walls_of(root)` gives this process's walls of a root (null:
/// none here); their tails are sealed into runs. Collective when `sum` is: every process passes the same
/// requests.
std::vector<double> class_wall_quantiles(std::span<const WallRequest> requests,
                                         const std::function<ClassWalls*(int32_t root)>& walls_of,
                                         const SumOverProcesses& sum);

}  // namespace ascprof::analysis
