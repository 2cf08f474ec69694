#pragma once
// Reading option objects on the JS thread. The TS facade validates and fills defaults; these checks
// are the second line, so a direct caller of the native module still gets INVALID_ARGUMENT, never a
// crash.
#include <napi.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "common/error.h"

namespace ts {

inline Napi::Object as_object(const Napi::Value& v, const char* what) {
  if (!v.IsObject()) fail("INVALID_ARGUMENT", std::string(what) + " must be an object");
  return v.As<Napi::Object>();
}

inline double num(const Napi::Object& o, const char* key, double def, double lo, double hi) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined() || v.IsNull()) return def;
  if (!v.IsNumber()) fail("INVALID_ARGUMENT", std::string(key) + " must be a number");
  const double x = v.As<Napi::Number>().DoubleValue();
  if (!std::isfinite(x) || x < lo || x > hi)
    fail("INVALID_ARGUMENT", std::string(key) + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return x;
}

inline int integer(const Napi::Object& o, const char* key, int def, int lo, int hi) {
  const double x = num(o, key, def, lo, hi);
  if (x != std::floor(x)) fail("INVALID_ARGUMENT", std::string(key) + " must be an integer");
  return static_cast<int>(x);
}

inline std::string str(const Napi::Object& o, const char* key, const std::string& def) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined() || v.IsNull()) return def;
  if (!v.IsString()) fail("INVALID_ARGUMENT", std::string(key) + " must be a string");
  return v.As<Napi::String>().Utf8Value();
}

inline bool boolean(const Napi::Object& o, const char* key, bool def) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined() || v.IsNull()) return def;
  if (!v.IsBoolean()) fail("INVALID_ARGUMENT", std::string(key) + " must be a boolean");
  return v.As<Napi::Boolean>().Value();
}

template <typename T, napi_typedarray_type Kind>
std::vector<T> typed(const Napi::Object& o, const char* key, size_t expect) {
  Napi::Value v = o.Get(key);
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != Kind)
    fail("INVALID_ARGUMENT", std::string("rollouts.") + key + " has the wrong array type");
  auto a = v.As<Napi::TypedArrayOf<T>>();
  if (a.ElementLength() != expect)
    fail("INVALID_ARGUMENT", std::string("rollouts.") + key + " must have " + std::to_string(expect) + " elements");
  std::vector<T> out(expect);
  if (expect) std::memcpy(out.data(), a.Data(), expect * sizeof(T));
  return out;
}

template <typename TA, typename T>
TA to_typed(Napi::Env env, const std::vector<T>& v) {
  TA a = TA::New(env, v.size());
  if (!v.empty()) std::memcpy(a.Data(), v.data(), v.size() * sizeof(T));
  return a;
}

}  // namespace ts
