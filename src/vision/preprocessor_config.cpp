// preprocessor_config.json with JsonReader: types and ranges checked, errors name the key.
#include "vision/preprocessor_config.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/json_reader.h"

namespace ds {
namespace {

constexpr int64_t kMaxPixelBudget = int64_t{1} << 34;  // far beyond any image; keeps products in range
constexpr int64_t kPilBicubic = 3;                      // PILImageResampling.BICUBIC

// image_mean / image_std: three numbers (or one, for all channels), rounded to fp32 as torch does.
Status read_channel_values(const JsonReader& reader, const nlohmann::json& json, const char* key,
                           std::array<float, 3>& out, bool positive) {
  if (!reader.has(key)) return {};
  const nlohmann::json& value = json[key];
  std::array<double, 3> values{};
  if (value.is_number()) values.fill(value.get<double>());
  else if (value.is_array() && value.size() == 3 && value[0].is_number() && value[1].is_number() && value[2].is_number())
    for (size_t c = 0; c < 3; ++c) values[c] = value[c].get<double>();
  else
    return Status::errorf(reader.where(key), ": expected a number or a list of 3 numbers (one per RGB channel), found ",
                          value.dump());
  for (size_t c = 0; c < 3; ++c) {
    if (positive && !(values[c] > 0))
      return Status::errorf(reader.where(key), ": expected positive values, found ", values[c]);
    out[c] = static_cast<float>(values[c]);
  }
  return {};
}

}  // namespace

Result<PreprocessorConfig> parse_preprocessor_config(const std::string& text, const std::string& source) {
  DS_ASSIGN_OR_RETURN(const nlohmann::json json, JsonReader::parse(text, source));
  if (!json.is_object()) return Status::errorf(source, ": expected a JSON object, found ", json.type_name());
  const JsonReader reader(json, source + ": ");
  PreprocessorConfig c;
  DS_ASSIGN_OR_RETURN(const std::string type, reader.get_string_or("image_processor_type", "Qwen2VLImageProcessor"));
  if (type != "Qwen2VLImageProcessor" && type != "Qwen2VLImageProcessorFast")
    return Status::errorf(reader.where("image_processor_type"),
                          ": expected \"Qwen2VLImageProcessor\" or \"Qwen2VLImageProcessorFast\", found \"", type, "\"");
  if (reader.has("size")) {
    DS_ASSIGN_OR_RETURN(const JsonReader size, reader.child("size"));
    DS_ASSIGN_OR_RETURN(c.min_pixels, size.get_int("shortest_edge", 0, kMaxPixelBudget));
    DS_ASSIGN_OR_RETURN(c.max_pixels, size.get_int("longest_edge", 1, kMaxPixelBudget));
  }
  DS_ASSIGN_OR_RETURN(c.min_pixels, reader.get_int_or("min_pixels", c.min_pixels, 0, kMaxPixelBudget));
  DS_ASSIGN_OR_RETURN(c.max_pixels, reader.get_int_or("max_pixels", c.max_pixels, 1, kMaxPixelBudget));
  if (c.min_pixels > c.max_pixels)
    return Status::errorf(source, ": expected min_pixels (size.shortest_edge) ", c.min_pixels,
                          " to be at most max_pixels (size.longest_edge), found ", c.max_pixels);
  DS_ASSIGN_OR_RETURN(c.patch_size, reader.get_int_or("patch_size", c.patch_size, 1, 1024));
  DS_ASSIGN_OR_RETURN(c.temporal_patch_size, reader.get_int_or("temporal_patch_size", c.temporal_patch_size, 1, 16));
  DS_ASSIGN_OR_RETURN(c.merge_size, reader.get_int_or("merge_size", c.merge_size, 1, 16));
  DS_ASSIGN_OR_RETURN(c.do_resize, reader.get_bool_or("do_resize", c.do_resize));
  DS_ASSIGN_OR_RETURN(c.do_rescale, reader.get_bool_or("do_rescale", c.do_rescale));
  DS_ASSIGN_OR_RETURN(c.do_normalize, reader.get_bool_or("do_normalize", c.do_normalize));
  DS_ASSIGN_OR_RETURN(c.rescale_factor, reader.get_double_or("rescale_factor", c.rescale_factor));
  if (!(c.rescale_factor > 0))
    return Status::errorf(reader.where("rescale_factor"), ": expected a positive number, found ", c.rescale_factor);
  DS_ASSIGN_OR_RETURN(const bool convert_rgb, reader.get_bool_or("do_convert_rgb", true));
  if (!convert_rgb) return Status::errorf(reader.where("do_convert_rgb"), ": expected true (images are RGB), found false");
  DS_ASSIGN_OR_RETURN(const int64_t resample, reader.get_int_or("resample", kPilBicubic, 0, 5));
  if (resample != kPilBicubic)
    return Status::errorf(reader.where("resample"), ": expected 3 (bicubic, the only resize implemented), found ", resample);
  if (!c.do_rescale && !c.do_normalize)
    return Status::errorf(source, ": expected do_rescale or do_normalize (the model takes float pixels), found neither");
  DS_TRY(read_channel_values(reader, json, "image_mean", c.image_mean, false));
  DS_TRY(read_channel_values(reader, json, "image_std", c.image_std, true));
  return c;
}

Result<PreprocessorConfig> load_preprocessor_config(const std::string& dir) {
  const std::filesystem::path path = std::filesystem::path(dir) / "preprocessor_config.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::not_found("cannot read ", path.string(), " (a vision checkpoint ships one beside config.json)");
  std::stringstream text;
  text << in.rdbuf();
  return parse_preprocessor_config(text.str(), "preprocessor_config.json");
}

}  // namespace ds
