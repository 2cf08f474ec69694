#include "io/json-lite.h"

#include <cstdlib>
#include <stdexcept>

namespace ts {

namespace {

struct Parser {
  const std::string& s;
  size_t i = 0;
  int depth = 0;

  [[noreturn]] void bad(const char* what) { throw std::runtime_error(std::string("json: ") + what); }
  void ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t')) ++i;
  }
  char peek() {
    ws();
    if (i >= s.size()) bad("unexpected end");
    return s[i];
  }
  void expect(char c) {
    if (peek() != c) bad("unexpected character");
    ++i;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (true) {
      if (i >= s.size()) bad("unterminated string");
      char c = s[i++];
      if (c == '"') break;
      if (c == '\\') {
        if (i >= s.size()) bad("bad escape");
        char e = s[i++];
        switch (e) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'u': {
            if (i + 4 > s.size()) bad("bad unicode escape");
            const unsigned cp = std::strtoul(s.substr(i, 4).c_str(), nullptr, 16);
            i += 4;
            if (cp < 0x80) out += static_cast<char>(cp);
            else if (cp < 0x800) out += static_cast<char>(0xC0 | (cp >> 6)), out += static_cast<char>(0x80 | (cp & 0x3F));
            else out += static_cast<char>(0xE0 | (cp >> 12)), out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)),
                 out += static_cast<char>(0x80 | (cp & 0x3F));
            break;
          }
          default: out += e;
        }
      } else {
        out += c;
      }
    }
    return out;
  }
  Json value() {
    if (++depth > 64) bad("nesting too deep");
    Json j;
    const char c = peek();
    if (c == '{') {
      ++i;
      j.kind = Json::Kind::Object;
      if (peek() == '}') {
        ++i;
      } else {
        while (true) {
          std::string k = string();
          expect(':');
          j.obj[k] = value();
          if (peek() == ',') {
            ++i;
            continue;
          }
          expect('}');
          break;
        }
      }
    } else if (c == '[') {
      ++i;
      j.kind = Json::Kind::Array;
      if (peek() == ']') {
        ++i;
      } else {
        while (true) {
          j.arr.push_back(value());
          if (peek() == ',') {
            ++i;
            continue;
          }
          expect(']');
          break;
        }
      }
    } else if (c == '"') {
      j.kind = Json::Kind::String;
      j.str = string();
    } else if (s.compare(i, 4, "true") == 0) {
      j.kind = Json::Kind::Bool, j.b = true, i += 4;
    } else if (s.compare(i, 5, "false") == 0) {
      j.kind = Json::Kind::Bool, i += 5;
    } else if (s.compare(i, 4, "null") == 0) {
      i += 4;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      const char* start = s.c_str() + i;
      char* end = nullptr;
      j.kind = Json::Kind::Number;
      j.num = std::strtod(start, &end);
      if (end == start) bad("bad number");
      i += static_cast<size_t>(end - start);
    } else {
      bad("unexpected token");
    }
    --depth;
    return j;
  }
};

}  // namespace

Json parse_json(const std::string& text) {
  Parser p{text};
  Json j = p.value();
  p.ws();
  if (p.i != text.size()) throw std::runtime_error("json: trailing characters");
  return j;
}

std::string json_escape(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (c == '\n') out += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else out += c;
  }
  return out + "\"";
}

}  // namespace ts
