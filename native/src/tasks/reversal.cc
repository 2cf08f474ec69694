#include <algorithm>
#include <cmath>

#include "tasks/task.h"

namespace ts {

// "abc=" -> "cba": letters from an alphabet of `alphabet` symbols, length in [min, max].
ProblemGenerator reversal_generator(const TaskConfig& c) {
  ProblemGenerator g;
  for (int i = 0; i < c.alphabet; ++i) g.symbols += static_cast<char>('a' + i);
  g.symbols += '=';
  g.max_prompt_chars = c.max_length + 1;
  g.max_answer_chars = c.max_length;
  for (int n = c.min_length; n <= c.max_length; ++n) g.problem_space += std::pow(c.alphabet, n);
  const int lo = c.min_length, hi = c.max_length, k = c.alphabet;
  g.draw = [lo, hi, k](Rng& rng) {
    const int n = lo + static_cast<int>(rng.below(hi - lo + 1));
    std::string s;
    for (int i = 0; i < n; ++i) s += static_cast<char>('a' + rng.below(k));
    std::string r(s.rbegin(), s.rend());
    return Problem{s + "=", r};
  };
  return g;
}

}  // namespace ts
