// Shewchuk's exact summation (exact_sum.hpp), as Python's math.fsum: msum's partials and its
// correctly rounded read-out.
#include "ascprof/common/exact_sum.hpp"

#include <cmath>

namespace ascprof {

void ExactSum::add(double x) {
  if (!std::isfinite(x)) {
    special_ += x;
    has_special_ = true;
    return;
  }
  size_t i = 0;
  for (double y : partials_) {
    if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
    const double hi = x + y;
    const double lo = y - (hi - x);
    if (lo != 0.0) partials_[i++] = lo;
    x = hi;
  }
  partials_.resize(i);
  partials_.push_back(x);
}

void ExactSum::add(const ExactSum& other) {
  for (const double p : other.partials_) add(p);
  if (other.has_special_) {
    special_ += other.special_;
    has_special_ = true;
  }
}

double ExactSum::value() const {
  if (has_special_) return special_;
  size_t n = partials_.size();
  if (n == 0) return 0.0;
  double hi = partials_[--n], lo = 0.0;
  while (n > 0) {  // add the partials from the top until the rounding is inexact
    const double x = hi, y = partials_[--n];
    hi = x + y;
    lo = y - (hi - x);
    if (lo != 0.0) break;
  }
  // half-way case: round towards the sign of the rest (what makes the result correctly rounded)
  if (n > 0 && ((lo < 0 && partials_[n - 1] < 0) || (lo > 0 && partials_[n - 1] > 0))) {
    const double y = lo * 2, x = hi + y;
    if (y == x - hi) hi = x;
  }
  return hi;
}

}  // namespace ascprof
