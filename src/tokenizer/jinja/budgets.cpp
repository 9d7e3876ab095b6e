// The renderer's budgets (RenderLimits): output and value size, evaluation steps, value nesting; our own
// limits on top of jinja2's sandbox so hostile templates end with an error.
#include "tokenizer/jinja/render_internal.h"

#include <algorithm>

namespace ds::jinja::detail {

// Rough byte size of a value's str()/tojson(), stopping once it passes `cap` (namespaces count as small).
size_t approx_size(const Value& v, size_t cap) {
  switch (v.kind()) {
    case Value::Kind::string: return v.as_string().size() * 2 + 2;
    case Value::Kind::list: {
      size_t n = 2;
      for (const Value& item : v.as_list()) {
        n += approx_size(item, cap) + 2;
        if (n > cap) return n;
      }
      return n;
    }
    case Value::Kind::dict: {
      size_t n = 2;
      for (const auto& [k, item] : v.as_dict()) {
        n += k.size() * 2 + 6 + approx_size(item, cap);
        if (n > cap) return n;
      }
      return n;
    }
    default: return 32;
  }
}

int nesting(const Value& v, int cap) {
  if (cap <= 0) return 1;
  int depth = 0;
  if (v.is_list())
    for (const Value& item : v.as_list()) depth = std::max(depth, nesting(item, cap - 1));
  else if (v.is_dict())
    for (const auto& [k, item] : v.as_dict()) depth = std::max(depth, nesting(item, cap - 1));
  else
    return 0;
  return depth + 1;
}

Status Renderer::tick() {
  if (++steps_ > limits_.max_steps)
    return Status::errorf("template: rendering stopped after ", limits_.max_steps, " evaluation steps (runaway template?)");
  return Status();
}

Status Renderer::check_bytes(size_t n) const {
  if (n > limits_.max_output_bytes)
    return Status::errorf("template: expected output and values of at most ", limits_.max_output_bytes,
                          " bytes, found a larger one (runaway template?)");
  return Status();
}

Result<Value> Renderer::make_string(std::string s) const {
  DS_TRY(check_bytes(s.size()));
  return Value::string(std::move(s));
}

Result<Value> Renderer::make_list(List items) const {
  DS_TRY(check_bytes(items.size() * 16));
  Value v = Value::list(std::move(items));
  if (nesting(v, 130) > 128) return Status::error("template: values nested more than 128 deep");
  return v;
}

Result<std::string> Renderer::to_str(const Value& v) const {
  if (!v.is_string()) DS_TRY(check_bytes(approx_size(v, limits_.max_output_bytes + 1)));
  return py_str(v);
}

}  // namespace ds::jinja::detail
