#pragma once
// A task with a verifiable reward, generated in C++ from a seed so that generation and scoring
// never round-trip through JS per token. A task is a character tokenizer plus a problem generator;
// adding one means writing a ProblemGenerator and registering it in task-registry.cc.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/rng.h"

namespace ts {

struct TaskConfig {
  std::string name = "addition";
  int digits = 2;      // addition
  int min_length = 3;  // reversal, sorting
  int max_length = 6;
  int alphabet = 10;   // reversal: letters a.. (a + alphabet - 1)
};

struct Problem {
  std::string prompt;  // e.g. "37+48="
  std::string answer;  // e.g. "85" (the <end> token is appended by the tokenizer)
};

struct ProblemGenerator {
  std::string symbols;            // every prompt/answer character, in token-id order
  int max_prompt_chars = 0;
  int max_answer_chars = 0;
  double problem_space = 0;       // number of distinct prompts (bounds the held-out set)
  std::function<Problem(Rng&)> draw;
};

class Task {
 public:
  Task(TaskConfig config, ProblemGenerator gen);
  const TaskConfig& config() const { return config_; }
  int vocab_size() const { return static_cast<int>(gen_.symbols.size()) + 2; }
  int end_id() const { return static_cast<int>(gen_.symbols.size()); }
  int pad_id() const { return end_id() + 1; }
  int max_prompt_tokens() const { return gen_.max_prompt_chars; }
  int max_new_tokens() const { return gen_.max_answer_chars + 1; }
  std::vector<int32_t> encode(const std::string& s) const;
  std::string decode(const int32_t* tokens, int n) const;
  std::string symbol_names() const;  // for the checkpoint sidecar

  // Training draws never return a held-out prompt.
  Problem sample_train(Rng& rng) const;
  // 1 when the completion is the answer followed by <end>, else 0.
  float reward(const Problem& p, const int32_t* completion, int n) const;
  const std::vector<Problem>& eval_set() const { return eval_; }
  const std::vector<Problem>& probe_set() const { return probe_; }

 private:
  TaskConfig config_;
  ProblemGenerator gen_;
  int32_t lookup_[256];
  std::vector<Problem> eval_, probe_;
  std::unordered_set<std::string> held_out_;
};

std::unique_ptr<Task> make_task(const TaskConfig& c);

ProblemGenerator addition_generator(const TaskConfig& c);
ProblemGenerator reversal_generator(const TaskConfig& c);
ProblemGenerator sorting_generator(const TaskConfig& c);

}  // namespace ts
