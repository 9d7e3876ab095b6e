// Images on the command line: the media flags and the optional tower.
#include "vision_options.h"

#include <filesystem>

#include "util/log.h"
#include "util/str_cat.h"

namespace ds::app {

void add_vision_options(CLI::App* command, VisionCliOptions& options) {
  command->add_option("--allowed-local-media-path", options.allowed_local_media_path,
                      "Directory whose files image parts may name as file:// URLs (symlinks resolved; nothing outside "
                      "it). Without it only data: URLs are taken; http(s) URLs are never fetched");
  command->add_option("--limit-mm-per-prompt", options.limit_mm_per_prompt,
                      str_cat("Images per request, as JSON: '{\"image\": N}' (default ", server::kDefaultMaxImages, ")"));
}

Result<server::MediaOptions> media_options(const VisionCliOptions& options) {
  server::MediaOptions media;
  if (!options.limit_mm_per_prompt.empty()) {
    DS_ASSIGN_OR_RETURN(media.max_images, server::parse_image_limit(options.limit_mm_per_prompt));
  }
  if (!options.allowed_local_media_path.empty()) {
    std::error_code ec;
    const std::filesystem::path dir = std::filesystem::canonical(options.allowed_local_media_path, ec);
    if (ec || !std::filesystem::is_directory(dir))
      return Status::errorf("--allowed-local-media-path: expected an existing directory, found '",
                            options.allowed_local_media_path, "'", ec ? str_cat(" (", ec.message(), ")") : "");
    media.allowed_local_media_path = dir.string();
  }
  return media;
}

std::unique_ptr<VisionModel> load_vision_if_present(LoadedModel& loaded, const std::string& model_dir, int threads,
                                                    std::string& refusal) {
  if (!loaded.config.vision) {
    refusal = "its config.json has no vision_config";
    return nullptr;
  }
  auto vision = load_vision_model(*loaded.checkpoint, loaded.config, model_dir);
  if (!vision.ok()) {
    refusal = str_cat("the vision tower did not load: ", vision.status().message());
    log::warn("vision: images will be refused: ", vision.status().message());
    return nullptr;
  }
  // The tower runs in the text model's mode (bf16-rounded matmul inputs in fast mode): its weights
  // go into the panels that mode's kernels read, unless the text model's weights stay mapped.
  if (loaded.weights != WeightsChoice::mapped)
    pack_vision_model(**vision, loaded.model->backend(), loaded.model->mode() == ComputeMode::fast, threads);
  return std::move(vision).value();
}

}  // namespace ds::app
