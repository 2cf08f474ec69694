#pragma once
// Diagnostics for tests: compares the analytic gradient of every parameter tensor with central finite
// differences on a tiny model, for a given objective.
#include <string>
#include <vector>

namespace ts {

struct GradCheckRow {
  std::string tensor;
  double max_abs_error = 0;
  double max_abs_grad = 0;
  int checked = 0;
};

std::vector<GradCheckRow> grad_check(const std::string& objective, int samples_per_tensor, double step, uint64_t seed);

}  // namespace ts
