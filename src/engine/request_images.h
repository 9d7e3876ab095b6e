// RequestImages: a request's images on the engine thread — where their pad-token runs sit in the
// prompt, the prompt's mRoPE positions and decode offset, and the merger rows once the tower ran.
// Empty for a text-only request, which keeps the text positions and costs nothing extra.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cache/prefix_key.h"
#include "model/forward_batch.h"
#include "util/status.h"
#include "vision/prompt_image.h"

namespace ds {

struct RequestImages {
  std::vector<PromptImage> images;  // prompt order; an image's pixel_values are freed once its rows exist
  std::vector<int64_t> first;       // [images]: prompt index of each image's first pad token
  std::vector<int64_t> count;       // [images]: its pad tokens (the merger's rows)
  // [images]: merger rows [count, hidden], shared by every request holding the same content; null
  // until a prefill chunk reaches the image (one a prefix-cache hit covers never runs the tower).
  std::vector<std::shared_ptr<const std::vector<float>>> rows;
  std::vector<int32_t> positions;  // [prompt_len, 3]: mRoPE (T, H, W) of the prompt
  int64_t rope_delta = 0;          // a token at index i ≥ prompt_len sits at i + rope_delta on all rows

  // What one step's SequenceInput points at (rewritten each step).
  std::vector<int32_t> step_positions;  // [n, 3]
  std::vector<int32_t> step_at;         // indices into the step's tokens
  std::vector<float> step_rows;         // [step_at.size(), hidden]
  // What the MTP head's rows of one step point at (fill_head; rewritten each step).
  std::vector<int32_t> head_positions;  // [n, 3]
  std::vector<int32_t> head_at;         // rows whose next token is an image pad with merger rows
  std::vector<float> head_rows;         // [head_at.size(), hidden]: those pads' merger rows

  bool empty() const { return images.empty(); }
  // The images' content hashes at their first pad token: they enter the prefix keys.
  std::vector<KeyedContent> keyed_contents() const;
  // Images whose pad runs meet tokens [start, start + n) and have no rows yet.
  std::vector<size_t> missing(int64_t start, int64_t n) const;
  // Points `input` at the mRoPE positions of tokens [start, start + n) — the prompt's, then
  // i + rope_delta — and at the merger rows of the pad tokens among them (their rows must exist).
  void fill(SequenceInput& input, int64_t start, int64_t n, int64_t prompt_len);
  // The MTP head's inputs for its rows at tokens [start, start + n) (vLLM's proposer gives the head the
  // main model's positions and input embeddings): head_positions, the rows' mRoPE positions; head_at /
  // head_rows, the merger row of token i + 1 for each row i whose next token is an image pad (the head
  // embeds the next token). A pad whose image has no rows yet (the chunk stopped just before it) is
  // left out: its token embedding stands in, for that row's draft input only.
  void fill_head(int64_t start, int64_t n, int64_t prompt_len);
};

// Lays `images` out over `prompt` (already expanded: each image a run of its token count of
// `image_token_id`): the runs, the mRoPE positions and rope_delta. Refuses runs that do not match
// the images (naming the image) and, without images, any image-pad token in the prompt.
Result<RequestImages> plan_request_images(std::span<const int32_t> prompt, std::vector<PromptImage> images,
                                          int32_t image_token_id, int64_t merge_size);

}  // namespace ds
