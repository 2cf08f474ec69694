#include <algorithm>

#include "common/error.h"
#include "tasks/task.h"

namespace ts {

namespace {
constexpr uint64_t kEvalSeed = 0x5EED0E7A1ull;  // fixed: the held-out set never changes between runs
constexpr uint64_t kProbeSeed = 0x5EED0B0BEull;
constexpr size_t kSetSize = 500;
}  // namespace

Task::Task(TaskConfig config, ProblemGenerator gen) : config_(std::move(config)), gen_(std::move(gen)) {
  std::fill(std::begin(lookup_), std::end(lookup_), -1);
  for (size_t i = 0; i < gen_.symbols.size(); ++i) lookup_[static_cast<unsigned char>(gen_.symbols[i])] = static_cast<int32_t>(i);
  // Held-out: at most half of the problem space, so training always has problems left.
  const size_t eval_n = static_cast<size_t>(std::min<double>(kSetSize, gen_.problem_space / 2));
  Rng er(kEvalSeed);
  for (int guard = 0; eval_.size() < eval_n && guard < 1000000; ++guard) {
    Problem p = gen_.draw(er);
    if (held_out_.insert(p.prompt).second) eval_.push_back(p);
  }
  Rng pr(kProbeSeed);
  for (size_t i = 0; i < kSetSize; ++i) probe_.push_back(sample_train(pr));
}

std::vector<int32_t> Task::encode(const std::string& s) const {
  std::vector<int32_t> out;
  out.reserve(s.size());
  for (unsigned char ch : s) {
    if (lookup_[ch] < 0) fail("INVALID_ARGUMENT", std::string("character '") + static_cast<char>(ch) + "' is not in the task vocabulary");
    out.push_back(lookup_[ch]);
  }
  return out;
}

std::string Task::decode(const int32_t* tokens, int n) const {
  std::string s;
  for (int i = 0; i < n; ++i) {
    if (tokens[i] == end_id()) s += "<end>";
    else if (tokens[i] == pad_id()) s += "<pad>";
    else if (tokens[i] >= 0 && tokens[i] < end_id()) s += gen_.symbols[tokens[i]];
    else s += '?';
  }
  return s;
}

std::string Task::symbol_names() const { return gen_.symbols; }

Problem Task::sample_train(Rng& rng) const {
  for (;;) {
    Problem p = gen_.draw(rng);
    if (!held_out_.count(p.prompt)) return p;
  }
}

float Task::reward(const Problem& p, const int32_t* completion, int n) const {
  if (n != static_cast<int>(p.answer.size()) + 1) return 0.0f;
  for (size_t i = 0; i < p.answer.size(); ++i)
    if (completion[i] != lookup_[static_cast<unsigned char>(p.answer[i])]) return 0.0f;
  return completion[n - 1] == end_id() ? 1.0f : 0.0f;
}

}  // namespace ts
