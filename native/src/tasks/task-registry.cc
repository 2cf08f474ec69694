#include "common/error.h"
#include "tasks/task.h"

namespace ts {

std::unique_ptr<Task> make_task(const TaskConfig& c) {
  auto bad = [](const std::string& m) { fail("INVALID_ARGUMENT", "task: " + m); };
  if (c.name == "addition") {
    if (c.digits < 1 || c.digits > 9) bad("digits must be in [1, 9]");
    return std::make_unique<Task>(c, addition_generator(c));
  }
  if (c.min_length < 1 || c.max_length < c.min_length || c.max_length > 64) bad("need 1 <= minLength <= maxLength <= 64");
  if (c.name == "reversal") {
    if (c.alphabet < 2 || c.alphabet > 26) bad("alphabet must be in [2, 26]");
    return std::make_unique<Task>(c, reversal_generator(c));
  }
  if (c.name == "sorting") return std::make_unique<Task>(c, sorting_generator(c));
  bad("unknown task '" + c.name + "' (addition, reversal, sorting)");
  return nullptr;
}

}  // namespace ts
