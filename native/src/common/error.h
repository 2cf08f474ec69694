#pragma once
// One exception type for every failure the engine reports to JS. The code is a stable string that
// the TS facade turns into EngineError.code; needed/available carry the numbers of a budget overrun.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace ts {

class EngineError : public std::runtime_error {
 public:
  EngineError(std::string code, const std::string& message, uint64_t needed = 0, uint64_t available = 0)
      : std::runtime_error(message), code_(std::move(code)), needed_(needed), available_(available) {}
  const std::string& code() const { return code_; }
  uint64_t needed() const { return needed_; }
  uint64_t available() const { return available_; }

 private:
  std::string code_;
  uint64_t needed_;
  uint64_t available_;
};

[[noreturn]] inline void fail(const std::string& code, const std::string& message) {
  throw EngineError(code, message);
}

}  // namespace ts
