// float64 exponentials of float32 tensors, 8 at a time: a softmax line's
// and Sigmoid's. glibc's exp, one call per element (two per softmax
// output: the sum, then the output), took `rec_ppocrv4`'s 40 × 6625
// character scores 4.2 ms a run, more than all its convolutions together.
// Here exp is a degree-13 polynomial after the usual reduction by ln 2
// (within a few ulp of float64, far below a float32's rounding), the same
// IEEE operations in every clone, so the same bytes on every CPU; outside
// [-708, 708] (and for NaN) an element takes glibc's exp.
#pragma once

#include <cstdint>

namespace eulernpu::kit::exp_vectors {

// e[j] = exp(x[j] - max) for j in [0, len); returns their sum, added as 8
// lanes (lane l the j ≡ l mod 8, in order of j), then the lanes pairwise
// (l, l+4), (l, l+2), (l, l+1). `max` is finite and no x[j] - max is NaN
// or above 0; below -708 (and -inf) an element takes glibc's exp. `min`:
// the smallest x[j] (no element is checked where min - max >= -708).
double exponentials(const float* x, int64_t len, double max, double min, double* e);

// y[j] = e[j] / sum rounded to float32.
void divide(const double* e, int64_t len, double sum, float* y);

// y[j] = 1 / (1 + exp(-x[j])) in float64, rounded to float32: Sigmoid.
void sigmoid(const float* x, int64_t len, float* y);

}  // namespace eulernpu::kit::exp_vectors
