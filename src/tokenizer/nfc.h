// NFC normalization (HF tokenizers normalizers.NFC) with libutf8proc.
// Text whose code points cannot change under NFC (all ASCII, most CJK, ...) is returned untouched.
#pragma once

#include <string>
#include <string_view>

#include "util/status.h"

namespace ds {

// `text` must be valid UTF-8. Appends the NFC form of `text` to `out`.
Status nfc_append(std::string_view text, std::string& out);

// True when NFC(text) == text is certain without running the normalizer.
bool nfc_quick_yes(std::string_view text);

}  // namespace ds
