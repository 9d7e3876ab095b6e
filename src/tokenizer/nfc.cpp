// NFC through utf8proc_map(STABLE | COMPOSE); a cheap scan first skips the call for text made only of
// code points that neither decompose, compose with a predecessor, nor reorder.
#include "tokenizer/nfc.h"

#include <utf8proc.h>

#include <cstdlib>

#include "tokenizer/utf8.h"

namespace ds {
namespace {

// Conservative: true for every code point that NFC could change or that could merge with its
// neighbour (nonzero combining class, any decomposition, any composition role, Hangul jamo).
bool may_change(char32_t cp) {
  if (cp < 0x300) return false;  // below the combining marks nothing composes or decomposes
  if (cp >= 0x1100 && cp < 0x1200) return true;  // Hangul jamo compose algorithmically
  if (cp >= 0xAC00 && cp <= 0xD7A3) return true;  // Hangul syllables (LV + T)
  const utf8proc_property_t* p = utf8proc_get_property(static_cast<utf8proc_int32_t>(cp));
  return p->combining_class != 0 || p->decomp_seqindex != UINT16_MAX || p->comb_index != UINT16_MAX;
}

}  // namespace

bool nfc_quick_yes(std::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    if (static_cast<unsigned char>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    if (may_change(utf8::decode(text, pos))) return false;
  }
  return true;
}

Status nfc_append(std::string_view text, std::string& out) {
  if (nfc_quick_yes(text)) {
    out.append(text);
    return Status();
  }
  utf8proc_uint8_t* result = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                          static_cast<utf8proc_ssize_t>(text.size()), &result,
                                          static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (n < 0) return Status::errorf("NFC normalization failed: ", utf8proc_errmsg(n));
  out.append(reinterpret_cast<const char*>(result), static_cast<size_t>(n));
  std::free(result);
  return Status();
}

}  // namespace ds
