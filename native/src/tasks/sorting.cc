#include <algorithm>
#include <cmath>

#include "tasks/task.h"

namespace ts {

// "3141=" -> "1134": digits, length in [min, max].
ProblemGenerator sorting_generator(const TaskConfig& c) {
  ProblemGenerator g;
  g.symbols = "0123456789=";
  g.max_prompt_chars = c.max_length + 1;
  g.max_answer_chars = c.max_length;
  for (int n = c.min_length; n <= c.max_length; ++n) g.problem_space += std::pow(10.0, n);
  const int lo = c.min_length, hi = c.max_length;
  g.draw = [lo, hi](Rng& rng) {
    const int n = lo + static_cast<int>(rng.below(hi - lo + 1));
    std::string s;
    for (int i = 0; i < n; ++i) s += static_cast<char>('0' + rng.below(10));
    std::string sorted = s;
    std::sort(sorted.begin(), sorted.end());
    return Problem{s + "=", sorted};
  };
  return g;
}

}  // namespace ts
