// read_tokenizer_json: nlohmann's SAX events, the two tables streamed, the rest built into a tree the
// way nlohmann's own DOM parser builds one (a stack of open containers and the pending key).
#include "tokenizer/tokenizer_json_reader.h"

#include <utility>

namespace ds {
namespace {

using nlohmann::json;

class Reader final : public nlohmann::json_sax<json> {
 public:
  explicit Reader(const std::string& source) : source_(source) {}

  Result<TokenizerJson> take() && {
    if (!error_.ok()) return error_;
    return std::move(out_);
  }

  bool null() override { return value(json(nullptr), "null"); }
  bool boolean(bool flag) override { return value(json(flag), flag ? "true" : "false"); }
  bool number_integer(number_integer_t number) override {
    if (table_ == Table::vocab) return vocab_id(number);
    return value(json(number), "");
  }
  bool number_unsigned(number_unsigned_t number) override {
    if (table_ == Table::vocab)
      return number < static_cast<number_unsigned_t>(kIdLimit) ? vocab_id(static_cast<int64_t>(number))
                                                                : wrong_vocab_id(std::to_string(number));
    return value(json(number), "");
  }
  bool number_float(number_float_t number, const string_t& text) override { return value(json(number), text); }
  bool binary(binary_t&) override { return value(json(), "binary"); }  // the JSON parser never calls this
  bool string(string_t& text) override {
    if (table_ == Table::merges) return merge_string(text);
    if (table_ == Table::vocab) return wrong_vocab_id(str_cat("\"", text.substr(0, 30), "\""));
    return value(json(std::move(text)), "");
  }
  bool key(string_t& key) override {
    key_ = std::move(key);
    return true;
  }

  bool start_object(std::size_t) override {
    if (table_ == Table::vocab) return wrong_vocab_id("an object");
    if (table_ == Table::merges) return wrong_merge("an object");
    if (at_model_table("vocab")) {
      table_ = Table::vocab;
      return true;
    }
    open(json::object());
    return true;
  }
  bool end_object() override {
    if (table_ == Table::vocab) {
      table_ = Table::none;
      out_.has_vocab = true;
      return true;
    }
    close();
    return true;
  }
  bool start_array(std::size_t) override {
    if (table_ == Table::vocab) return wrong_vocab_id("an array");
    if (table_ == Table::merges) {
      if (in_pair_) return wrong_merge("an array inside the pair");
      in_pair_ = true;
      pair_.clear();
      return true;
    }
    if (at_model_table("merges")) {
      table_ = Table::merges;
      return true;
    }
    open(json::array());
    return true;
  }
  bool end_array() override {
    if (table_ == Table::merges) {
      if (!in_pair_) {
        table_ = Table::none;
        out_.has_merges = true;
        return true;
      }
      if (pair_.size() != 2) return wrong_merge(pair_.size() == 1 ? "1 string" : "no string");
      in_pair_ = false;
      out_.merges.emplace_back(std::move(pair_[0]), std::move(pair_[1]));
      return true;
    }
    close();
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& error) override {
    return fail(Status::errorf(source_, ": not valid JSON (", error.what(), ")"));
  }

 private:
  enum class Table { none, vocab, merges };
  static constexpr int64_t kIdLimit = int64_t{1} << 24;

  // The next container is model.<name> (the document's "model" object, one level down).
  bool at_model_table(const char* name) const {
    return open_.size() == 2 && open_keys_[1] == "model" && open_[1]->is_object() && key_ == name;
  }

  json* place(json node) {
    if (open_.empty()) {
      out_.rest = std::move(node);
      return &out_.rest;
    }
    json& parent = *open_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(node));
      return &parent.back();
    }
    json& slot = parent[key_];  // a repeated key: the last value stands, as in nlohmann's parser
    slot = std::move(node);
    return &slot;
  }
  void open(json container) {
    const bool keyed = !open_.empty() && open_.back()->is_object();
    open_.push_back(place(std::move(container)));
    open_keys_.push_back(keyed ? key_ : std::string());
  }
  void close() {
    open_.pop_back();
    open_keys_.pop_back();
  }

  // A scalar; inside a table it is misplaced, and `text` says what it was.
  bool value(json node, const std::string& text) {
    if (table_ == Table::vocab) return wrong_vocab_id(text.empty() ? node.dump() : text);
    if (table_ == Table::merges) return wrong_merge(text.empty() ? node.dump() : text);
    place(std::move(node));
    return true;
  }

  bool vocab_id(int64_t id) {
    if (id < 0 || id >= kIdLimit) return wrong_vocab_id(std::to_string(id));
    out_.vocab.emplace_back(std::move(key_), static_cast<int32_t>(id));
    return true;
  }
  bool wrong_vocab_id(const std::string& found) {
    return fail(Status::errorf(source_, ": model.vocab[\"", key_.substr(0, 60), "\"]: expected an id in [0, 2^24), found ", found));
  }

  bool merge_string(std::string& text) {
    if (in_pair_) {
      if (pair_.size() == 2) return wrong_merge("more than 2 strings");
      pair_.push_back(std::move(text));
      return true;
    }
    const size_t space = text.find(' ');
    if (space == std::string::npos || text.find(' ', space + 1) != std::string::npos)
      return fail(Status::errorf(source_, ": model.merges[", out_.merges.size(), "]: expected \"LEFT RIGHT\" with one space, found \"",
                                 text.substr(0, 60), "\""));
    out_.merges.emplace_back(text.substr(0, space), text.substr(space + 1));
    return true;
  }
  bool wrong_merge(const std::string& found) {
    return fail(Status::errorf(source_, ": model.merges[", out_.merges.size(), "]: expected a string \"a b\" or a pair [a, b], found ",
                               in_pair_ ? "a pair holding " : "", found.substr(0, 60)));
  }

  bool fail(Status status) {
    if (error_.ok()) error_ = std::move(status);
    return false;  // stops the parser
  }

  const std::string& source_;
  TokenizerJson out_;
  Status error_;
  std::vector<json*> open_;  // containers of out_.rest being filled, outermost first
  std::vector<std::string> open_keys_;  // the key each sits under in its parent ("" in an array)
  std::string key_;  // the key of the next value in the innermost object
  Table table_ = Table::none;
  bool in_pair_ = false;  // inside a merge written as [a, b]
  std::vector<std::string> pair_;  // [0, 2] strings of that merge so far
};

}  // namespace

Result<TokenizerJson> read_tokenizer_json(std::string_view text, const std::string& source) {
  Reader reader(source);
  json::sax_parse(text.begin(), text.end(), &reader);
  return std::move(reader).take();
}

}  // namespace ds
