#include "io/safetensors.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/error.h"
#include "io/json-lite.h"

namespace ts {

namespace {
[[noreturn]] void corrupt(const std::string& path, const std::string& why) {
  fail("CORRUPT_CHECKPOINT", "corrupt checkpoint file " + path + ": " + why);
}
}  // namespace

void write_safetensors(const std::string& path, const std::vector<StTensorOut>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  std::ostringstream h;
  h << "{";
  bool first = true;
  if (!metadata.empty()) {
    h << "\"__metadata__\":{";
    bool f2 = true;
    for (const auto& [k, v] : metadata) {
      h << (f2 ? "" : ",") << json_escape(k) << ":" << json_escape(v);
      f2 = false;
    }
    h << "}";
    first = false;
  }
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    uint64_t count = 1;
    for (auto s : t.shape) count *= static_cast<uint64_t>(s);
    h << (first ? "" : ",") << json_escape(t.name) << ":{\"dtype\":\"F32\",\"shape\":[";
    for (size_t i = 0; i < t.shape.size(); ++i) h << (i ? "," : "") << t.shape[i];
    h << "],\"data_offsets\":[" << offset << "," << offset + count * 4 << "]}";
    offset += count * 4;
    first = false;
  }
  h << "}";
  std::string header = h.str();
  while (header.size() % 8) header += ' ';  // data starts 8-byte aligned, as the format recommends
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail("IO_ERROR", "cannot write " + tmp);
    uint64_t n = header.size();
    unsigned char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
    out.write(reinterpret_cast<const char*>(len), 8);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    for (const auto& t : tensors) {
      uint64_t count = 1;
      for (auto s : t.shape) count *= static_cast<uint64_t>(s);
      out.write(reinterpret_cast<const char*>(t.data), static_cast<std::streamsize>(count * 4));
    }
    if (!out) fail("IO_ERROR", "write failed: " + tmp);
  }
  // Rename last, so a crash mid-write never leaves a truncated file under the final name.
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail("IO_ERROR", "cannot rename " + tmp + " to " + path);
}

StFile read_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) fail("CORRUPT_CHECKPOINT", "cannot open checkpoint file " + path);
  const auto size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  if (size < 8) corrupt(path, "shorter than the 8-byte header length");
  unsigned char len[8];
  in.read(reinterpret_cast<char*>(len), 8);
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(len[i]) << (8 * i);
  if (n < 2 || n > 100000000 || 8 + n > size) corrupt(path, "header length " + std::to_string(n) + " does not fit the file");
  std::string header(n, '\0');
  in.read(header.data(), static_cast<std::streamsize>(n));
  Json j;
  try {
    j = parse_json(header);
  } catch (const std::exception& e) {
    corrupt(path, e.what());
  }
  if (j.kind != Json::Kind::Object) corrupt(path, "header is not a JSON object");
  StFile f;
  f.data.resize(size - 8 - n);
  in.read(f.data.data(), static_cast<std::streamsize>(f.data.size()));
  if (!in) corrupt(path, "truncated data");
  std::vector<std::pair<size_t, size_t>> spans;
  for (const auto& [name, v] : j.obj) {
    if (name == "__metadata__") {
      if (v.kind != Json::Kind::Object) corrupt(path, "__metadata__ is not an object");
      for (const auto& [k, mv] : v.obj) {
        if (mv.kind != Json::Kind::String) corrupt(path, "__metadata__ values must be strings");
        f.metadata[k] = mv.str;
      }
      continue;
    }
    if (v.kind != Json::Kind::Object) corrupt(path, "entry " + name + " is not an object");
    auto dt = v.obj.find("dtype");
    auto sh = v.obj.find("shape");
    auto off = v.obj.find("data_offsets");
    if (dt == v.obj.end() || sh == v.obj.end() || off == v.obj.end()) corrupt(path, "entry " + name + " lacks dtype/shape/data_offsets");
    if (dt->second.kind != Json::Kind::String || dt->second.str != "F32") corrupt(path, name + ": only F32 is supported");
    if (sh->second.kind != Json::Kind::Array || off->second.kind != Json::Kind::Array || off->second.arr.size() != 2)
      corrupt(path, name + ": malformed shape or offsets");
    StTensorIn t;
    uint64_t count = 1;
    for (const auto& d : sh->second.arr) {
      if (d.kind != Json::Kind::Number || d.num < 0 || d.num > 1e10) corrupt(path, name + ": bad dimension");
      t.shape.push_back(static_cast<int64_t>(d.num));
      count *= static_cast<uint64_t>(d.num);
    }
    const double b = off->second.arr[0].num, e = off->second.arr[1].num;
    if (b < 0 || e < b || e > static_cast<double>(f.data.size())) corrupt(path, name + ": data offsets outside the file");
    t.begin = static_cast<size_t>(b), t.end = static_cast<size_t>(e);
    if (t.end - t.begin != count * 4) corrupt(path, name + ": byte length does not match its shape");
    spans.emplace_back(t.begin, t.end);
    f.tensors[name] = t;
  }
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i)
    if (spans[i].first < spans[i - 1].second) corrupt(path, "tensor data overlaps");
  return f;
}

const float* StFile::tensor(const std::string& name, const std::vector<int64_t>& shape) const {
  auto it = tensors.find(name);
  if (it == tensors.end()) fail("CORRUPT_CHECKPOINT", "checkpoint lacks tensor " + name);
  if (it->second.shape != shape) fail("CORRUPT_CHECKPOINT", "tensor " + name + " has a shape that does not match the model");
  return reinterpret_cast<const float*>(data.data() + it->second.begin);
}

}  // namespace ts
