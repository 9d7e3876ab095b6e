#include "io/checkpoint.h"

namespace ds {

std::string shape_to_string(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

const TensorView* Checkpoint::find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

Result<TensorView> Checkpoint::take(const std::string& name) {
  const TensorView* view = find(name);
  if (view == nullptr) return Status::errorf("missing tensor \"", name, "\"");
  taken_.insert(name);
  return *view;
}

std::vector<std::string> Checkpoint::untaken() const {
  std::vector<std::string> names;
  for (const auto& [name, _] : tensors_)
    if (!taken_.count(name)) names.push_back(name);
  return names;
}

const std::vector<int32_t>& Checkpoint::column_heads(const std::string& name) const {
  static const std::vector<int32_t> in_order;
  const auto it = column_heads_.find(name);
  return it == column_heads_.end() ? in_order : it->second;
}

uint64_t Checkpoint::total_bytes() const {
  uint64_t bytes = 0;
  for (const auto& [_, view] : tensors_) bytes += view.nbytes;
  return bytes;
}

}  // namespace ds
