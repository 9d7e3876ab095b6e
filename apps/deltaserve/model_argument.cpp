#include "model_argument.h"

#include "io/hub_cache.h"

namespace ds::app {

CLI::Option* add_model_option(CLI::App* command, std::string& model, const std::string& help) {
  const CLI::Validator hub_id(
      [](std::string& value) -> std::string {
        auto resolved = resolve_model_argument(value);
        if (!resolved.ok()) return resolved.status().message();
        value = *resolved;
        return {};
      },
      "", "hub id");
  return command->add_option("-m,--model", model, help + "; or a Hub id (org/name) already in the Hugging Face cache")
      ->transform(hub_id);
}

}  // namespace ds::app
