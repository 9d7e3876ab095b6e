// mrope_positions after transformers' Qwen3_5Model.get_rope_index / get_vision_position_ids.
#include "vision/mrope_positions.h"

#include <algorithm>

namespace ds {

Result<MropePositions> mrope_positions(std::span<const int32_t> ids, int32_t image_token_id,
                                       std::span<const VisionGrid> grids, int64_t merge_size) {
  MropePositions out;
  out.positions.reserve(ids.size() * 3);
  int64_t p = 0, max_position = -1;
  size_t image = 0;
  const auto push = [&](int64_t t, int64_t h, int64_t w) {
    out.positions.insert(out.positions.end(), {static_cast<int32_t>(t), static_cast<int32_t>(h), static_cast<int32_t>(w)});
    max_position = std::max({max_position, t, h, w});
  };
  for (size_t i = 0; i < ids.size();) {
    if (ids[i] != image_token_id) {
      push(p, p, p);
      ++p, ++i;
      continue;
    }
    size_t run = 0;
    while (i + run < ids.size() && ids[i + run] == image_token_id) ++run;
    if (image >= grids.size())
      return Status::errorf("prompt: image ", image + 1, " has ", run, " image tokens but only ", grids.size(),
                            " image(s) were given");
    const VisionGrid& g = grids[image];
    const int64_t gh = g.h / merge_size, gw = g.w / merge_size;
    if (static_cast<int64_t>(run) != g.t * gh * gw)
      return Status::errorf("prompt: image ", image + 1, " of grid ", g.t, " x ", g.h, " x ", g.w, ": expected ",
                            g.t * gh * gw, " image tokens, found ", run);
    for (int64_t t = 0; t < g.t; ++t)
      for (int64_t r = 0; r < gh; ++r)
        for (int64_t c = 0; c < gw; ++c) push(p + t, p + r, p + c);
    p += std::max(gh, gw);
    i += run;
    ++image;
  }
  if (image != grids.size())
    return Status::errorf("prompt: expected image tokens for ", grids.size(), " image(s), found ", image);
  out.rope_delta = max_position + 1 - static_cast<int64_t>(ids.size());
  return out;
}

}  // namespace ds
