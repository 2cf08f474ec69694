#pragma once
// Just enough JSON to read a safetensors header: objects, arrays, strings, numbers, literals.
// Any malformed input throws std::runtime_error; callers turn it into CORRUPT_CHECKPOINT.
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ts {

struct Json {
  enum class Kind { Null, Bool, Number, String, Array, Object } kind = Kind::Null;
  bool b = false;
  double num = 0;
  std::string str;
  std::vector<Json> arr;
  std::map<std::string, Json> obj;
};

Json parse_json(const std::string& text);
std::string json_escape(const std::string& s);

}  // namespace ts
