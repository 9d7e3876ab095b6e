// Jinja syntax tree: expressions and statements as jinja2.nodes has them (the subset chat templates
// use: if/for/set/macro/call blocks, filters, tests, slicing, calls, inline if).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tokenizer/jinja/value.h"

namespace ds::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    literal, name, get_attr, get_item, slice, call, filter, test, neg, pos, not_, binary, and_, or_, compare,
    cond, list, tuple, dict
  };
  Kind kind;
  int line = 0, column = 0;
  Value value;                  // literal
  std::string name;             // name, attribute, filter / test name, binary / compare operator
  std::vector<ExprPtr> args;    // operands, positional arguments, items (dict: key, value, key, value...)
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  std::vector<std::string> ops; // compare chain operators
  bool negated = false;         // `is not`
  bool has[3] = {false, false, false};  // slice: which of start/stop/step are present
};

struct Node;
using Body = std::vector<std::unique_ptr<Node>>;

struct Node {
  enum class Kind { text, output, if_, for_, set, set_block, macro, call_block, break_, continue_ };
  Kind kind;
  int line = 0, column = 0;
  std::string text;                   // text; set_block / macro name
  ExprPtr expr;                       // output; set value; for iterable; call_block call
  std::vector<std::pair<ExprPtr, Body>> branches;  // if / elif
  Body body, else_body;               // for, set_block, macro, call_block; if-else, for-else
  std::vector<std::string> targets;   // for / set variables; macro / caller parameters
  std::string ns_attr;                // set ns.attr = ...
  ExprPtr filter;                     // for ... if cond
  std::vector<ExprPtr> defaults;      // macro defaults (null where none)
};

struct Program {
  Body body;
};

}  // namespace ds::jinja
