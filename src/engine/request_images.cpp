// RequestImages: the image runs of a prompt, and each step's positions and embedding rows.
#include "engine/request_images.h"

#include <algorithm>

#include "util/check.h"
#include "vision/mrope_positions.h"

namespace ds {

std::vector<KeyedContent> RequestImages::keyed_contents() const {
  std::vector<KeyedContent> contents;
  for (size_t j = 0; j < images.size(); ++j) contents.push_back({first[j], images[j].content_hash});
  return contents;
}

std::vector<size_t> RequestImages::missing(int64_t start, int64_t n) const {
  std::vector<size_t> out;
  for (size_t j = 0; j < images.size(); ++j)
    if (!rows[j] && first[j] < start + n && first[j] + count[j] > start) out.push_back(j);
  return out;
}

void RequestImages::fill(SequenceInput& input, int64_t start, int64_t n, int64_t prompt_len) {
  if (start + n <= prompt_len) {
    input.positions = std::span<const int32_t>(positions).subspan(static_cast<size_t>(start * 3), static_cast<size_t>(n * 3));
  } else {
    step_positions.resize(static_cast<size_t>(n * 3));
    for (int64_t i = start; i < start + n; ++i) {
      int32_t* out = step_positions.data() + (i - start) * 3;
      if (i < prompt_len) {
        std::copy_n(positions.data() + i * 3, 3, out);
      } else {
        std::fill_n(out, 3, static_cast<int32_t>(i + rope_delta));
      }
    }
    input.positions = step_positions;
  }
  step_at.clear();
  step_rows.clear();
  for (size_t j = 0; j < images.size(); ++j) {
    const int64_t lo = std::max(start, first[j]), hi = std::min(start + n, first[j] + count[j]);
    if (lo >= hi) continue;
    DS_CHECK(rows[j] != nullptr, "image ", j, " reached a forward without its merger rows");
    const auto hidden = static_cast<int64_t>(rows[j]->size()) / count[j];
    for (int64_t i = lo; i < hi; ++i) step_at.push_back(static_cast<int32_t>(i - start));
    step_rows.insert(step_rows.end(), rows[j]->begin() + (lo - first[j]) * hidden, rows[j]->begin() + (hi - first[j]) * hidden);
  }
  input.embedding_at = step_at;
  input.embedding_rows = step_rows;
}

void RequestImages::fill_head(int64_t start, int64_t n, int64_t prompt_len) {
  head_positions.resize(static_cast<size_t>(n * 3));
  for (int64_t i = start; i < start + n; ++i) {
    int32_t* out = head_positions.data() + (i - start) * 3;
    if (i < prompt_len) std::copy_n(positions.data() + i * 3, 3, out);
    else std::fill_n(out, 3, static_cast<int32_t>(i + rope_delta));
  }
  head_at.clear();
  head_rows.clear();
  for (size_t j = 0; j < images.size(); ++j) {  // next tokens: [start + 1, start + n + 1)
    const int64_t lo = std::max(start + 1, first[j]), hi = std::min(start + n + 1, first[j] + count[j]);
    if (lo >= hi || rows[j] == nullptr) continue;
    const auto hidden = static_cast<int64_t>(rows[j]->size()) / count[j];
    for (int64_t i = lo; i < hi; ++i) head_at.push_back(static_cast<int32_t>(i - 1 - start));
    head_rows.insert(head_rows.end(), rows[j]->begin() + (lo - first[j]) * hidden, rows[j]->begin() + (hi - first[j]) * hidden);
  }
}

Result<RequestImages> plan_request_images(std::span<const int32_t> prompt, std::vector<PromptImage> images,
                                          int32_t image_token_id, int64_t merge_size) {
  RequestImages out;
  if (images.empty()) {
    const auto pad = std::find(prompt.begin(), prompt.end(), image_token_id);
    if (pad != prompt.end())
      return Status::errorf("prompt token ", pad - prompt.begin(), " is the image-pad token (", image_token_id,
                            "), but the request carries no image");
    return out;
  }
  std::vector<VisionGrid> grids;
  for (const PromptImage& image : images) grids.push_back(image.grid);
  DS_ASSIGN_OR_RETURN(MropePositions mrope, mrope_positions(prompt, image_token_id, grids, merge_size));
  for (size_t i = 0; i < prompt.size(); ++i) {
    if (prompt[i] != image_token_id || (i > 0 && prompt[i - 1] == image_token_id)) continue;
    size_t end = i;
    while (end < prompt.size() && prompt[end] == image_token_id) ++end;
    out.first.push_back(static_cast<int64_t>(i));
    out.count.push_back(static_cast<int64_t>(end - i));
  }
  out.rows.resize(images.size());
  out.images = std::move(images);
  out.positions = std::move(mrope.positions);
  out.rope_delta = mrope.rope_delta;
  return out;
}

}  // namespace ds
