// Jinja interpreter over the parsed template (parser.h): jinja2 3.1 semantics as HF's chat-template
// environment runs them (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loopcontrols,
// raise_exception, strftime_now, tojson = json.dumps(ensure_ascii=False)). Python values show through
// (str() of True / None / floats, repr of lists and dicts). Unknown filters and tests are an error
// before rendering starts (jinja2 reports them at compile time); runtime errors name line and column.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/value.h"
#include "util/status.h"

namespace ds::jinja {

struct RenderLimits {
  size_t max_output_bytes = size_t{64} << 20;  // the rendered text and any string / list built on the way
  int max_call_depth = 100;                    // nested macro calls (and caller() blocks)
  uint64_t max_steps = 50'000'000;             // statements and expressions evaluated (bounds runaway loops)
};

// Prefix of the message of an error raised by the template itself (raise_exception(msg)):
// "chat template raised an exception: " + msg.
inline constexpr std::string_view kRaisedPrefix = "chat template raised an exception: ";

// Checks what jinja2 checks when it compiles a template: every filter and test name is known.
Status check_template(const Program& program);

// Renders with `globals` as the template's variables (HF passes messages, tools, add_generation_prompt,
// the special-token strings and template kwargs). `now` overrides the clock of strftime_now (tests).
Result<std::string> render_template(const Program& program, const Dict& globals, const RenderLimits& limits = {},
                                    std::function<std::string(const std::string& format)> strftime_now = nullptr);

// parse_template + check_template + render_template.
Result<std::string> render_template_source(std::string_view source, const Dict& globals, const RenderLimits& limits = {});

}  // namespace ds::jinja
