#pragma once
/// A sum of doubles that is exact until it is read, so it can be split over ranks and processes and
/// merged in any order and grouping with the same result (issue 22: the reductions up a tree of
/// processes). It keeps the sum as Shewchuk's non-overlapping partials (the algorithm behind
/// Python's math.fsum) and reads it correctly rounded: value() is the double nearest the exact sum
/// of everything added, ties to even. Typically one to three partials; infinities and NaN are
/// summed apart and win, as in a plain sum.
#include <vector>

namespace ascprof {

class ExactSum {
 public:
  void add(double x);
  void add(const ExactSum& other);
  /// The exact sum, correctly rounded.
  double value() const;
  bool empty() const { return partials_.empty() && !has_special_; }

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & partials_ & special_ & has_special_;
  }

 private:
  std::vector<double> partials_;  ///< non-overlapping, increasing magnitude
  double special_ = 0;            ///< the plain sum of the infinities and NaN added
  bool has_special_ = false;
};

}  // namespace ascprof
