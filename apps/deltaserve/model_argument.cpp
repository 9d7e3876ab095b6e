#include "model_argument.h"

#include "io/hub_cache.h"

namespace ds::app {

CLI::Validator hub_model_resolver() {
  return CLI::Validator(
      [](std::string& model) -> std::string {
        auto resolved = resolve_model_argument(model);
        if (!resolved.ok()) return resolved.status().message();
        model = *resolved;
        return {};
      },
      "", "hub id");
}

}  // namespace ds::app
