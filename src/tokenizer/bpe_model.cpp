// BPE merge loop in HF's order: repeatedly apply the lowest-ranked adjacent pair, leftmost first,
// via a min-heap over (rank, position) with stale entries skipped (tokenizers models/bpe/word.rs).
#include "tokenizer/bpe_model.h"

#include <queue>

namespace ds {

BpeModel::BpeModel(BpeModel&& other) noexcept
    : vocab_(std::move(other.vocab_)), merges_(std::move(other.merges_)), ignore_merges_(other.ignore_merges_) {
  std::copy(std::begin(other.byte_ids_), std::end(other.byte_ids_), byte_ids_);
}

BpeModel& BpeModel::operator=(BpeModel&& other) noexcept {
  vocab_ = std::move(other.vocab_);
  merges_ = std::move(other.merges_);
  ignore_merges_ = other.ignore_merges_;
  std::copy(std::begin(other.byte_ids_), std::end(other.byte_ids_), byte_ids_);
  std::lock_guard lock(cache_mutex_);
  cache_.clear();
  return *this;
}

Result<BpeModel> BpeModel::build(Vocab vocab,
                                 const std::vector<std::pair<std::string, std::string>>& merges, bool ignore_merges) {
  BpeModel model;
  model.vocab_ = std::move(vocab);
  model.ignore_merges_ = ignore_merges;
  for (int b = 0; b < 256; ++b) model.byte_ids_[b] = model.token_to_id(std::string(1, static_cast<char>(b)));
  model.merges_.reserve(merges.size());
  std::string joined;  // left + right, one buffer for all merges
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    const int32_t a = model.token_to_id(left), b = model.token_to_id(right);
    joined.assign(left).append(right);
    const int32_t merged = model.token_to_id(joined);
    // HF refuses such a file too ("Merges text file invalid" / token out of vocabulary).
    if (a < 0 || b < 0)
      return Status::errorf("merge ", rank, ": expected both parts in the vocabulary, found \"",
                            a < 0 ? left : right, "\" missing");
    if (merged < 0) return Status::errorf("merge ", rank, ": expected the merged token in the vocabulary, found it missing");
    model.merges_.try_emplace(key(a, b), Merge{static_cast<int32_t>(rank), merged});  // first rank wins, as in HF
  }
  return model;
}

int32_t BpeModel::token_to_id(std::string_view bytes) const {
  const auto it = vocab_.find(bytes);
  return it == vocab_.end() ? -1 : it->second;
}

const BpeModel::Merge* BpeModel::find_merge(int32_t a, int32_t b) const {
  const auto it = merges_.find(key(a, b));
  return it == merges_.end() ? nullptr : &it->second;
}

void BpeModel::encode_word(std::string_view word, std::vector<int32_t>& ids) const {
  if (ignore_merges_) {
    const int32_t whole = token_to_id(word);
    if (whole >= 0) {
      ids.push_back(whole);
      return;
    }
  }
  const bool cacheable = word.size() <= kMaxCachedBytes;
  if (cacheable) {
    std::lock_guard lock(cache_mutex_);
    const auto it = cache_.find(word);
    if (it != cache_.end()) {
      ids.insert(ids.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  const size_t first = ids.size();
  merge_word(word, ids);
  if (cacheable) {
    std::lock_guard lock(cache_mutex_);
    if (cache_.size() < kCacheCapacity) cache_.emplace(std::string(word), std::vector<int32_t>(ids.begin() + first, ids.end()));
  }
}

void BpeModel::merge_word(std::string_view word, std::vector<int32_t>& ids) const {
  struct Symbol {
    int32_t id;
    int32_t prev, next;  // -1 at the ends
  };
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  for (const char c : word) {
    const int32_t id = byte_ids_[static_cast<unsigned char>(c)];
    if (id < 0) continue;  // no symbol for this byte and no unk: HF drops it
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back({id, index - 1, -1});
    if (index > 0) symbols[index - 1].next = index;
  }
  if (symbols.size() > 1) {
    struct Candidate {
      int32_t rank, pos, left_id, right_id;
      bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
    auto push = [&](int32_t pos) {
      if (pos < 0) return;
      const int32_t next = symbols[pos].next;
      if (next < 0) return;
      if (const Merge* m = find_merge(symbols[pos].id, symbols[next].id))
        queue.push({m->rank, pos, symbols[pos].id, symbols[next].id});
    };
    for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i) push(i);
    while (!queue.empty()) {
      const Candidate top = queue.top();
      queue.pop();
      Symbol& left = symbols[top.pos];
      // Stale entries: the left symbol was absorbed (id -1) or either side changed since the push.
      if (left.id != top.left_id || left.next < 0 || symbols[left.next].id != top.right_id) continue;
      Symbol& right = symbols[left.next];
      left.id = find_merge(top.left_id, top.right_id)->id;
      left.next = right.next;
      if (right.next >= 0) symbols[right.next].prev = top.pos;
      right.id = -1;
      push(left.prev);
      push(top.pos);
    }
  }
  for (int32_t i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next) ids.push_back(symbols[i].id);
}

}  // namespace ds
