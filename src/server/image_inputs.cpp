// load_chat_images: image_url parts → bytes (data: / file://) → PromptImage, each failure a 400.
#include "server/image_inputs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>

#include "util/base64.h"
#include "util/str_cat.h"

namespace ds::server {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// The start of a URL for an error message (a data: URL can be megabytes).
std::string shown(const std::string& url) { return url.size() <= 48 ? url : url.substr(0, 48) + "..."; }

template <typename F>
void for_each_image_part(const Json& messages, F&& f) {
  for (size_t m = 0; m < messages.size(); ++m) {
    const Json& message = messages[m];
    if (!message.contains("content") || !message["content"].is_array()) continue;
    const Json& parts = message["content"];
    for (size_t p = 0; p < parts.size(); ++p)
      if (parts[p].value("type", "") == "image_url")
        if (!f(parts[p]["image_url"]["url"].get<std::string>(), str_cat("messages[", m, "].content[", p, "]"))) return;
  }
}

Result<std::vector<uint8_t>> data_url_bytes(const std::string& url, const ImageLimits& limits) {
  const size_t comma = url.find(',');
  if (comma == std::string::npos)
    return Status::errorf("expected a data: URL of the form data:image/png;base64,..., found no ',' in \"", shown(url), "\"");
  const std::string header = url.substr(5, comma - 5);  // after "data:"
  if (header.size() < 7 || header.compare(header.size() - 7, 7, ";base64") != 0)
    return Status::errorf("expected a base64 data: URL (data:image/png;base64,...), found \"data:", shown(header), ",\"");
  if (header.rfind("image/", 0) != 0 && header != ";base64")
    return Status::errorf("expected an image media type (data:image/...;base64,), found \"", shown(header.substr(0, header.size() - 7)), "\"");
  return decode_base64(std::string_view(url).substr(comma + 1), limits.max_bytes);
}

Result<std::string> percent_decoded(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    auto hex = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; };
    if (i + 2 >= text.size() || hex(text[i + 1]) < 0 || hex(text[i + 2]) < 0)
      return Status::errorf("expected %XX (two hex digits) at offset ", i, " of the path");
    out.push_back(static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2])));
    i += 2;
  }
  return out;
}

Result<std::vector<uint8_t>> file_url_bytes(const std::string& url, const MediaOptions& options) {
  if (options.allowed_local_media_path.empty())
    return Status::errorf("file:// URLs are refused: the server was started without --allowed-local-media-path DIR");
  const std::string rest = url.substr(7);  // after "file://"
  if (rest.empty() || rest[0] != '/')
    return Status::errorf("expected file:///absolute/path, found \"", shown(url), "\"");
  DS_ASSIGN_OR_RETURN(const std::string path, percent_decoded(rest));
  const fs::path allowed(options.allowed_local_media_path);
  const auto under_allowed = [&](const fs::path& p) {
    return std::mismatch(allowed.begin(), allowed.end(), p.begin(), p.end()).first == allowed.end();
  };
  // Checked before the file is touched too, so a request cannot learn which files exist elsewhere.
  if (!under_allowed(fs::path(path).lexically_normal()))
    return Status::errorf("expected a file under --allowed-local-media-path ", allowed.string(), ", found ", path);
  std::error_code ec;
  const fs::path real = fs::canonical(path, ec);  // symlinks resolved: an escape through one is outside
  if (ec) return Status::errorf("cannot open ", path, ": ", ec.message());
  if (!under_allowed(real))
    return Status::errorf("expected a file under --allowed-local-media-path ", allowed.string(), ", found ", path, " (",
                          real.string(), ")");
  if (!fs::is_regular_file(real, ec)) return Status::errorf("expected a regular file, found ", path);
  const uint64_t size = fs::file_size(real, ec);
  if (ec) return Status::errorf("cannot read ", path, ": ", ec.message());
  if (size > options.limits.max_bytes)
    return Status::errorf("expected an image file of at most ", options.limits.max_bytes, " bytes, found ", size, " bytes");
  std::ifstream in(real, std::ios::binary);
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size)))
    return Status::errorf("cannot read ", path);
  return bytes;
}

Result<std::vector<uint8_t>> url_bytes(const std::string& url, const MediaOptions& options) {
  if (url.rfind("data:", 0) == 0) return data_url_bytes(url, options.limits);
  if (url.rfind("file://", 0) == 0) return file_url_bytes(url, options);
  if (url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0)
    return Status::errorf("http(s) image URLs are not fetched by this server; send the image inline as a data: URL "
                          "(data:image/png;base64,...) or as a file:// URL under --allowed-local-media-path");
  return Status::errorf("expected a data:, file:// or http(s) URL, found \"", shown(url), "\"");
}

}  // namespace

int64_t count_image_parts(const Json& messages) {
  int64_t n = 0;
  for_each_image_part(messages, [&](const std::string&, const std::string&) { return ++n, true; });
  return n;
}

std::variant<std::vector<PromptImage>, ApiError> load_chat_images(const Json& messages, const MediaOptions& options,
                                                                   const VisionModel* vision, const std::string& refusal) {
  std::vector<PromptImage> images;
  const int64_t n = count_image_parts(messages);
  if (n == 0) return images;
  if (n > options.max_images && vision != nullptr)
    return bad_request(str_cat("messages: expected at most ", options.max_images, " images per request (--limit-mm-per-prompt), found ", n),
                       "messages");
  std::optional<ApiError> error;
  for_each_image_part(messages, [&](const std::string& url, const std::string& where) {
    if (vision == nullptr) {
      error = bad_request(str_cat(where, ": this model takes text only, image parts are refused (", refusal, ")"), where);
      return false;
    }
    Result<std::vector<uint8_t>> bytes = url_bytes(url, options);
    if (!bytes.ok()) {
      error = bad_request(str_cat(where, ".image_url.url: ", bytes.status().message()), str_cat(where, ".image_url.url"));
      return false;
    }
    Result<PromptImage> image = prepare_image(*bytes, options.limits, vision->preprocessor);
    if (!image.ok()) {
      error = bad_request(str_cat(where, ".image_url.url: ", image.status().message()), str_cat(where, ".image_url.url"));
      return false;
    }
    images.push_back(std::move(image).value());
    return true;
  });
  if (error) return *error;
  return images;
}

Result<int64_t> parse_image_limit(const std::string& text) {
  const Json json = Json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_object())
    return Status::errorf("--limit-mm-per-prompt: expected JSON like '{\"image\": 4}', found '", text, "'");
  int64_t limit = kDefaultMaxImages;
  for (const auto& [key, value] : json.items()) {
    if (key != "image")
      return Status::errorf("--limit-mm-per-prompt: only \"image\" is supported, found \"", key, "\"");
    if (!value.is_number_integer() || value.get<int64_t>() < 0)
      return Status::errorf("--limit-mm-per-prompt: \"image\": expected a count ≥ 0, found ", value.dump());
    limit = value.get<int64_t>();
  }
  return limit;
}

}  // namespace ds::server
