#pragma once
// safetensors: 8-byte little-endian header length N, N bytes of JSON
// ({"name": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, "__metadata__": {...}}),
// then the raw little-endian tensor bytes. Reading validates everything and throws
// CORRUPT_CHECKPOINT for any truncation, overlap or malformed header.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ts {

struct StTensorOut {
  std::string name;
  std::vector<int64_t> shape;
  const float* data;
};

void write_safetensors(const std::string& path, const std::vector<StTensorOut>& tensors,
                       const std::map<std::string, std::string>& metadata);

struct StTensorIn {
  std::vector<int64_t> shape;
  size_t begin = 0, end = 0;  // byte offsets into StFile::data
};

struct StFile {
  std::map<std::string, StTensorIn> tensors;
  std::map<std::string, std::string> metadata;
  std::vector<char> data;
  const float* tensor(const std::string& name, const std::vector<int64_t>& shape) const;
};

StFile read_safetensors(const std::string& path);

}  // namespace ts
