#include <cmath>
#include <string>

#include "tasks/task.h"

namespace ts {

// "a+b=" -> decimal a+b, operands uniform in [0, 10^digits) without zero padding (DESIGN §6).
ProblemGenerator addition_generator(const TaskConfig& c) {
  ProblemGenerator g;
  g.symbols = "0123456789+=";
  const uint64_t limit = static_cast<uint64_t>(std::pow(10.0, c.digits));
  g.max_prompt_chars = 2 * c.digits + 2;
  g.max_answer_chars = c.digits + 1;
  g.problem_space = static_cast<double>(limit) * static_cast<double>(limit);
  g.draw = [limit](Rng& rng) {
    const uint64_t a = rng.below(limit), b = rng.below(limit);
    return Problem{std::to_string(a) + "+" + std::to_string(b) + "=", std::to_string(a + b)};
  };
  return g;
}

}  // namespace ts
