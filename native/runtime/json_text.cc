// JSON string text on the wire's hot path: finding where a string ends and quoting one.
// Both come down to "how far does this run of bytes go without a quote, a backslash or
// a control byte", answered 16 bytes at a time where SSE2 exists (every x86_64), so a
// 64 KiB payload costs a few microseconds instead of a byte-at-a-time walk.
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "runtime.h"

namespace vis {

size_t JsonPlainRun(const char* p, size_t n) {
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i bslash = _mm_set1_epi8('\\');
  const __m128i space = _mm_set1_epi8(0x20);
  for (; i + 16 <= n; i += 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    // A byte is below 0x20 (unsigned) exactly when max(byte, 0x20) differs from it.
    __m128i printable = _mm_cmpeq_epi8(_mm_max_epu8(v, space), v);
    __m128i special = _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash));
    int bad = _mm_movemask_epi8(_mm_or_si128(special, _mm_andnot_si128(printable, _mm_set1_epi8(-1))));
    if (bad != 0) return i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(bad)));
  }
#endif
  for (; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(p[i]);
    if (c < 0x20 || c == '"' || c == '\\') return i;
  }
  return n;
}

// The same escapes as Python's json module with ensure_ascii=False, so a value reads the
// same whichever side quoted it.
void JsonQuoteBytes(std::string* out, const char* p, size_t n) {
  static const char* hex = "0123456789abcdef";
  out->reserve(out->size() + n + 2);
  out->push_back('"');
  size_t i = 0;
  while (i < n) {
    size_t run = JsonPlainRun(p + i, n - i);
    out->append(p + i, run);
    i += run;
    if (i >= n) break;
    unsigned char c = static_cast<unsigned char>(p[i++]);
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      case '\b': *out += "\\b"; break;
      case '\f': *out += "\\f"; break;
      default:
        *out += "\\u00";
        out->push_back(hex[c >> 4]);
        out->push_back(hex[c & 15]);
    }
  }
  out->push_back('"');
}

void JsonQuote(std::string* out, const std::string& s) { JsonQuoteBytes(out, s.data(), s.size()); }

// i at an opening quote: moves past the closing one. Control bytes inside are passed over
// (this only finds the end; the receiving parser judges the text).
bool JsonSkipString(const std::string& s, size_t* i) {
  size_t n = s.size();
  if (*i >= n || s[*i] != '"') return false;
  size_t at = *i + 1;
  const char* p = s.data();
  while (at < n) {
    at += JsonPlainRun(p + at, n - at);
    if (at >= n) break;
    char c = p[at];
    if (c == '"') {
      *i = at + 1;
      return true;
    }
    at += c == '\\' ? 2 : 1;
  }
  *i = n;
  return false;
}

}  // namespace vis
