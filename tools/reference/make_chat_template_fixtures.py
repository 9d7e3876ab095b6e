#!/usr/bin/env python3
# Makes tests/fixtures/chat_templates/: what HF renders, as the oracle for deltaserve's Jinja interpreter.
"""Usage: make_chat_template_fixtures.py [--out tests/fixtures/chat_templates]

hf_corpus.json: conversations rendered by transformers' `tokenizer.apply_chat_template(tokenize=False)` with
both real templates (../shared/testdata/chat_templates, hash-checked), through AutoTokenizer on a directory
holding the project tokenizer, config.json (model_type qwen3_5) and chat_template.jinja; errors recorded with
their message.

features.json: templates written feature by feature, rendered by jinja2 exactly as HF configures it
(transformers' own `_compile_jinja_template`: ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks,
loopcontrols, HF tojson, raise_exception, strftime_now). Deterministic."""
import argparse
import hashlib
import json
import os
import shutil
import tempfile

import jinja2
import transformers
from transformers import AutoTokenizer
from transformers.utils.chat_template_utils import _compile_jinja_template

REPO = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.path.normpath(os.path.join(REPO, "..", "shared", "testdata", "chat_templates"))
TEMPLATES = {
    "qwen3.5": "a4aee8afcf2e0711942cf848899be66016f8d14a889ff9ede07bca099c28f715",
    "qwen3.6": "e84f32a23fdda27689f868aa4a1a5621f41133e51a48d7f3efcbea2839574259",
}

WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Get the weather — in °C",
           "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City, e.g. Zürich"},
                          "days": {"type": "integer"}}, "required": ["city"]}}}
SEARCH = {"type": "function", "function": {"name": "search", "description": "Search the web",
          "parameters": {"type": "object", "properties": {"q": {"type": "string"}, "filters": {"type": "object"}}}}}
PLAIN_TOOL = {"name": "calc", "description": "Evaluate", "parameters": {"type": "object", "properties": {"expr": {"type": "string"}}}}


def sys(text):
    return {"role": "system", "content": text}


def user(text):
    return {"role": "user", "content": text}


def asst(text, **extra):
    return {"role": "assistant", "content": text, **extra}


def tool(text):
    return {"role": "tool", "content": text}


def call(name, arguments, wrap=True):
    return {"type": "function", "function": {"name": name, "arguments": arguments}} if wrap else {"name": name, "arguments": arguments}


def conversations():
    """(name, messages, tools, kwargs, add_generation_prompt) cases."""
    cases = []

    def add(name, messages, tools=None, kwargs=None, both=True):
        for agp in ([True, False] if both else [True]):
            cases.append((name, messages, tools, kwargs or {}, agp))

    add("user_only", [user("Hello")])
    add("system_user", [sys("You are a helpful assistant."), user("Hi there")])
    add("system_whitespace", [sys("  padded system  \n"), user("  padded user \n")])
    add("multi_turn", [sys("S"), user("one"), asst("first answer"), user("two"), asst("second answer"), user("three")])
    add("reasoning_last_turn", [user("q"), asst("answer", reasoning_content="let me think\nstep 2")])
    add("reasoning_history", [user("q1"), asst("a1", reasoning_content="r1"), user("q2"), asst("a2", reasoning_content="r2"), user("q3")])
    add("reasoning_in_content", [user("q"), asst("<think>\ninline reasoning\n</think>\n\nthe answer")])
    add("reasoning_in_content_history", [user("q"), asst("<think>old</think>old answer"), user("q2")])
    add("reasoning_empty", [user("q"), asst("a", reasoning_content="")])
    add("reasoning_alias_thinking", [user("q"), {"role": "assistant", "content": "a", "thinking": "via thinking"}])
    add("reasoning_alias_reasoning", [user("q"), {"role": "assistant", "content": "a", "reasoning": "via reasoning"}])
    add("thinking_off", [user("hi")], kwargs={"enable_thinking": False})
    add("thinking_on", [user("hi")], kwargs={"enable_thinking": True})
    add("thinking_off_history", [user("q"), asst("a", reasoning_content="r"), user("q2")], kwargs={"enable_thinking": False})
    add("preserve_thinking", [user("q1"), asst("a1", reasoning_content="r1"), user("q2"), asst("a2", reasoning_content="r2"), user("q3")],
        kwargs={"preserve_thinking": True})
    add("preserve_thinking_false", [user("q1"), asst("a1", reasoning_content="r1"), user("q2")], kwargs={"preserve_thinking": False})
    add("preserve_thinking_empty", [user("q1"), asst("a1"), user("q2")], kwargs={"preserve_thinking": True})
    add("tools_no_system", [user("weather?")], tools=[WEATHER])
    add("tools_with_system", [sys("Be brief."), user("weather?")], tools=[WEATHER, SEARCH])
    add("tools_plain_schema", [user("calc")], tools=[PLAIN_TOOL])
    add("tool_call_string_args", [user("weather in Paris"),
        asst("", tool_calls=[call("get_weather", {"city": "Paris", "unit": "celsius"})]),
        tool('{"temp": 21}'), asst("It is 21°C.")], tools=[WEATHER])
    add("tool_call_nonstring_args", [user("x"),
        asst("Calling.", tool_calls=[call("search", {"q": "qwen", "limit": 3, "exact": True, "none": None, "ratio": 0.5,
                                                     "big": 1e20, "tags": ["a", "é"], "filters": {"lang": "日本語", "n": [1, 2]}})]),
        tool("result")], tools=[SEARCH])
    add("tool_call_unwrapped", [user("x"), asst("", tool_calls=[call("calc", {"expr": "1+1"}, wrap=False)]), tool("2")])
    add("tool_calls_parallel", [user("two cities"),
        asst("", tool_calls=[call("get_weather", {"city": "Paris"}), call("get_weather", {"city": "Tokyo", "days": 2})]),
        tool("sunny"), tool("rainy"), tool("cloudy"), asst("Done.")], tools=[WEATHER])
    add("tool_call_with_reasoning", [user("w"), asst("", reasoning_content="need weather", tool_calls=[call("get_weather", {"city": "Rome"})]),
        tool("hot")], tools=[WEATHER])
    add("tool_call_content_none", [user("w"), asst(None, tool_calls=[call("get_weather", {"city": "Oslo"})]), tool("cold")])
    add("tool_call_no_arguments", [user("w"), asst("", tool_calls=[{"type": "function", "function": {"name": "ping"}}]), tool("pong")])
    add("tool_response_then_user", [user("a"), asst("", tool_calls=[call("calc", {"expr": "2"})]), tool("2"), asst("two"), user("thanks")])
    add("user_tool_response_text", [user("a"), asst("b"), user("<tool_response>\nfake\n</tool_response>")])
    add("images", [user([{"type": "image", "image": "file:///a.png"}, {"type": "text", "text": "What is this?"}])])
    add("image_url_and_video", [user([{"type": "image_url", "image_url": {"url": "http://x/y.png"}}, {"type": "video", "video": "v.mp4"},
                                      {"type": "text", "text": "Compare."}])])
    add("images_vision_id", [user([{"type": "image"}, {"type": "image"}, {"type": "text", "text": "two"}]),
                             asst("ok"), user([{"type": "video"}, {"type": "text", "text": "and this"}])], kwargs={"add_vision_id": True})
    add("content_list_text_only", [sys([{"type": "text", "text": "sys as list"}]), user([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])])
    add("assistant_content_list", [user("q"), asst([{"type": "text", "text": "list answer"}])])
    add("unicode", [sys("Système: réponds en français 🇫🇷"), user("日本語で答えて 😊\n\nزمان"), asst("はい。"), user("ok\u2028next")])
    add("special_tokens_in_content", [user("<|im_start|>user\nfake<|im_end|>"), asst("<tool_call>not a call</tool_call>")])
    add("long_multi_turn", [sys("S")] + [m for i in range(6) for m in (user(f"question {i}"), asst(f"answer {i}", reasoning_content=f"thought {i}"))])
    add("extra_fields", [{"role": "user", "content": "hi", "name": "bob", "id": 7}])
    add("bos_eos_kwargs", [user("hi")], kwargs={"custom_flag": True})
    # Errors (raise_exception and failures inside the template).
    add("error_empty_messages", [], both=False)
    add("error_no_user", [sys("only system")], both=False)
    add("error_system_not_first", [user("a"), sys("late system")], both=False)
    add("error_unknown_role", [user("a"), {"role": "narrator", "content": "x"}], both=False)
    add("error_system_image", [sys([{"type": "image"}, {"type": "text", "text": "s"}]), user("hi")], both=False)
    add("error_unknown_content_item", [user([{"type": "audio", "audio": "a.wav"}])], both=False)
    add("error_string_arguments", [user("a"), asst("", tool_calls=[call("calc", '{"expr": "1"}')]), tool("1")], both=False)
    add("error_only_tool_responses", [user("<tool_response>x</tool_response>")], both=False)
    return cases


def hf_corpus(workdir):
    corpus = {"transformers": transformers.__version__, "jinja2": jinja2.__version__, "templates": {}, "cases": []}
    for name, sha in TEMPLATES.items():
        source = open(os.path.join(SHARED, f"{name}.jinja"), "rb").read()
        assert hashlib.sha256(source).hexdigest() == sha, f"{name}.jinja: hash mismatch"
        corpus["templates"][name] = sha
        d = os.path.join(workdir, name)
        os.makedirs(d)
        for f in ("tokenizer.json", "tokenizer_config.json"):
            shutil.copy(os.path.join(REPO, "data", "tokenizer", f), d)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump({"model_type": "qwen3_5", "architectures": ["Qwen3_5ForCausalLM"]}, f)
        with open(os.path.join(d, "chat_template.jinja"), "wb") as f:
            f.write(source)
        tok = AutoTokenizer.from_pretrained(d)
        corpus["special_tokens"] = tok.special_tokens_map
        for case, messages, tools, kwargs, agp in conversations():
            entry = {"name": f"{name}/{case}/{'gen' if agp else 'nogen'}", "template": name, "messages": messages,
                     "tools": tools, "kwargs": kwargs, "add_generation_prompt": agp}
            try:
                entry["output"] = tok.apply_chat_template(messages, tools=tools, add_generation_prompt=agp, tokenize=False, **kwargs)
            except Exception as e:  # noqa: BLE001 — the message is the fixture
                entry["error"] = str(e)
                entry["error_type"] = type(e).__name__
            corpus["cases"].append(entry)
    return corpus


# --------------------------------------------------------------------------------------------- features
# (name, template, variables). Variables are JSON (what the C++ side can hold).
MSGS = [{"role": "system", "content": "S"}, {"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
FEATURES = [
    # statements: if / elif / else
    ("if_true", "{% if x %}yes{% endif %}", {"x": 1}),
    ("if_false", "{% if x %}yes{% else %}no{% endif %}", {"x": 0}),
    ("elif_chain", "{% for v in [1,2,3,4] %}{% if v == 1 %}a{% elif v == 2 %}b{% elif v == 3 %}c{% else %}d{% endif %}{% endfor %}", {}),
    ("if_undefined", "{% if missing %}x{% else %}undef{% endif %}", {}),
    ("if_and_or_not", "{{ (a and b) ~ '|' ~ (a or b) ~ '|' ~ (not a) ~ '|' ~ (none or 'd') ~ '|' ~ (0 and 1) }}", {"a": "s", "b": 0}),
    # for
    ("for_loop_vars", "{% for x in 'abc' %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.revindex }}{{ loop.revindex0 }};{% endfor %}", {}),
    ("for_previtem_nextitem", "{% for x in xs %}[{{ loop.previtem if loop.previtem is defined else '-' }}<{{ x }}>{{ loop.nextitem | default('-') }}]{% endfor %}", {"xs": [1, 2, 3]}),
    ("for_else", "{% for x in [] %}x{% else %}empty{% endfor %}", {}),
    ("for_else_filtered", "{% for x in [1,2] if x > 5 %}x{% else %}none passed{% endfor %}", {}),
    ("for_filter_loop_length", "{% for x in range(10) if x is odd %}{{ x }}/{{ loop.length }} {% endfor %}", {}),
    ("for_break", "{% for x in range(10) %}{% if x == 3 %}{% break %}{% endif %}{{ x }}{% endfor %}", {}),
    ("for_continue", "{% for x in range(6) %}{% if x is even %}{% continue %}{% endif %}{{ x }}{% endfor %}", {}),
    ("for_dict", "{% for k in d %}{{ k }}={{ d[k] }},{% endfor %}", {"d": {"b": 1, "a": 2}}),
    ("for_items_unpack", "{% for k, v in d.items() %}{{ k }}:{{ v }} {% endfor %}", {"d": {"x": [1], "y": None}}),
    ("for_tuple_paren", "{% for (a, b) in pairs %}{{ a + b }},{% endfor %}", {"pairs": [[1, 2], [3, 4]]}),
    ("for_nested_loop", "{% for a in [1,2] %}{% for b in 'xy' %}{{ loop.index }}{{ a }}{{ b }} {% endfor %}{{ loop.index }}|{% endfor %}", {}),
    ("for_string", "{% for c in 'héllo' %}{{ c }}-{% endfor %}", {}),
    ("for_undefined", "{% for x in nothing %}x{% else %}u{% endfor %}", {}),
    ("for_cycle", "{% for x in range(5) %}{{ loop.cycle('a', 'b', 'c') }}{% endfor %}", {}),
    ("for_scope_reset", "{% set n = 0 %}{% for x in [1,2,3] %}{% set n = n + x %}{{ n }},{% endfor %}{{ n }}", {}),
    ("for_messages_reversed", "{% for m in messages[::-1] %}{{ m.role }} {% endfor %}", {"messages": MSGS}),
    # set
    ("set_simple", "{% set a = 'x' ~ 1 %}{{ a }}", {}),
    ("set_tuple", "{% set a, b = [1, 2] %}{{ b }}{{ a }}", {}),
    ("set_block", "{% set body %}Hello {{ name }}!{% endset %}[{{ body | upper }}]", {"name": "bob"}),
    ("set_in_if_leaks", "{% if true %}{% set y = 5 %}{% endif %}{{ y }}", {}),
    ("namespace_counter", "{% set ns = namespace(count=0, last=none) %}{% for m in messages %}{% set ns.count = ns.count + 1 %}{% set ns.last = m.role %}{% endfor %}{{ ns.count }} {{ ns.last }}", {"messages": MSGS}),
    ("namespace_dict_arg", "{% set ns = namespace({'a': 1}, b=2) %}{{ ns.a }}{{ ns.b }}{{ ns.c is defined }}", {}),
    ("namespace_flag_in_loop", "{% set ns = namespace(found=false) %}{% for m in messages %}{% if m.role == 'user' %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.found }}", {"messages": MSGS}),
    # macros and call blocks
    ("macro_defaults", "{% macro greet(name, greeting='Hello', punct='!') %}{{ greeting }}, {{ name }}{{ punct }}{% endmacro %}{{ greet('A') }} {{ greet('B', 'Hi') }} {{ greet('C', punct='?') }}", {}),
    ("macro_missing_arg", "{% macro f(a, b) %}[{{ a }}|{{ b is defined }}]{% endmacro %}{{ f(1) }}", {}),
    ("macro_recursive", "{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n }}*{{ fact(n - 1) }}{% endif %}{% endmacro %}{{ fact(4) }}", {}),
    ("macro_render_content", "{%- macro render(c) -%}{%- if c is string -%}{{ c }}{%- else -%}{%- for p in c -%}{{ p.text if p.type == 'text' else '<img>' }}{%- endfor -%}{%- endif -%}{%- endmacro -%}{{ render('s') }}|{{ render([{'type':'text','text':'t'},{'type':'image'}]) }}", {}),
    ("macro_varargs_kwargs", "{% macro f(a) %}{{ a }}{{ varargs | list }}{{ kwargs }}{% endmacro %}{{ f(1, 2, 3, x=4) }}", {}),
    ("call_block", "{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call wrap('b') %}bold {{ 1 + 1 }}{% endcall %}", {}),
    ("call_block_args", "{% macro each(xs) %}{% for x in xs %}{{ caller(x) }}{% endfor %}{% endmacro %}{% call(item) each([1,2]) %}<{{ item }}>{% endcall %}", {}),
    ("macro_sees_outer", "{% set g = 'outer' %}{% macro f() %}{{ g }}{% endmacro %}{{ f() }}", {}),
    # filters
    ("filter_tojson_basic", "{{ v | tojson }}", {"v": {"a": [1, 2.5, None, True, "é\n\"q\"", {"z": {}}], "b": []}}),
    ("filter_tojson_indent", "{{ v | tojson(indent=2) }}", {"v": {"a": [1, {"b": None}], "c": "x"}}),
    ("filter_tojson_sort_keys", "{{ v | tojson(sort_keys=true) }}", {"v": {"b": 1, "a": {"d": 2, "c": 3}}}),
    ("filter_tojson_separators", "{{ v | tojson(separators=(',', ':')) }}", {"v": {"a": [1, 2], "b": "c"}}),
    ("filter_tojson_ensure_ascii", "{{ v | tojson(ensure_ascii=true) }}", {"v": ["é", "😊", "\u0001"]}),
    ("filter_tojson_scalars", "{{ 1 | tojson }} {{ 1.5 | tojson }} {{ 'a' | tojson }} {{ none | tojson }} {{ true | tojson }} {{ 1e100 | tojson }}", {}),
    ("filter_string", "{{ true | string }} {{ none | string }} {{ 3 | string }} {{ 0.1 | string }} {{ [1, 'a', none] | string }} {{ {'k': false} | string }}", {}),
    ("filter_length", "{{ 'héllo' | length }} {{ [1,2] | length }} {{ {'a':1} | length }} {{ missing | length }} {{ 'abc' | count }}", {}),
    ("filter_trim", "[{{ '  a b \n\t' | trim }}] [{{ 'xxaxx' | trim('x') }}]", {}),
    ("filter_upper_lower", "{{ 'Hello Wörld' | upper }} {{ 'Hello Wörld' | lower }}", {}),
    ("filter_join", "{{ [1, 'b', none] | join(', ') }} {{ 'abc' | join('-') }} {{ [] | join }}", {}),
    ("filter_join_attribute", "{{ users | join(', ', attribute='name') }}", {"users": [{"name": "a"}, {"name": "b"}]}),
    ("filter_items", "{% for k, v in d | items %}{{ k }}->{{ v }};{% endfor %}", {"d": {"one": 1, "two": [2]}}),
    ("filter_items_undefined", "[{% for k, v in nothing | items %}x{% endfor %}]", {}),
    ("filter_list", "{{ 'abc' | list }} {{ {'a': 1, 'b': 2} | list }} {{ [1] | list }}", {}),
    ("filter_first_last", "{{ [1,2,3] | first }} {{ [1,2,3] | last }} {{ 'xyz' | first }} {{ 'xyz' | last }} {{ ([] | first) is defined }}", {}),
    ("filter_default", "{{ missing | default('d') }} {{ none | default('d') }} {{ '' | default('d') }} {{ '' | default('d', true) }} {{ x | d('dd') }}", {"x": 0}),
    ("filter_safe", "{{ '<b>' | safe }}", {}),
    ("filter_replace", "{{ 'a-b-c' | replace('-', '+') }} {{ 'aaa' | replace('a', 'b', 2) }} {{ 'ab' | replace('', '.') }}", {}),
    ("filter_indent", "[{{ 'a\nb\n\nc' | indent }}] [{{ 'a\nb' | indent(2, true) }}] [{{ 'x\n\ny' | indent(2, blank=true) }}] [{{ 'p\nq' | indent('> ') }}]", {}),
    ("filter_chain", "{{ ' A,B ,c ' | trim | lower | replace(' ', '') }}", {}),
    ("filter_map_attribute", "{{ messages | map(attribute='role') | join(',') }}", {"messages": MSGS}),
    ("filter_selectattr", "{{ messages | selectattr('role', 'equalto', 'user') | map(attribute='content') | list }}", {"messages": MSGS}),
    ("filter_rejectattr", "{{ messages | rejectattr('role', 'eq', 'system') | list | length }}", {"messages": MSGS}),
    ("filter_select_reject", "{{ [1,2,3,4,0] | select('odd') | list }} {{ [1,2,0,'',none] | select | list }} {{ [1,2,3] | reject('even') | list }}", {}),
    ("filter_map_filter", "{{ ['a', 'b'] | map('upper') | join }}", {}),
    ("filter_sort_unique", "{{ [3,1,2,1] | sort }} {{ ['b','A','a'] | sort }} {{ [3,1,2] | sort(reverse=true) }} {{ [1,2,1,3] | unique | list }}", {}),
    ("filter_min_max_sum", "{{ [3,1,2] | min }} {{ [3,1,2] | max }} {{ [1,2,3.5] | sum }}", {}),
    ("filter_reverse", "{{ [1,2,3] | reverse | list }} {{ 'abc' | reverse }}", {}),
    ("filter_int_float_abs", "{{ '42' | int }} {{ 'x' | int }} {{ 3.9 | int }} {{ '2.5' | float }} {{ -3 | abs }} {{ 7 | float }}", {}),
    ("filter_capitalize_title", "{{ 'hELLO world' | capitalize }} {{ 'hello big world' | title }}", {}),
    ("filter_escape", "{{ '<a href=\"x\">&\\'</a>' | e }}", {}),
    ("filter_batch_round", "{{ [1,2,3,4,5] | batch(2) | list }} {{ 2.5 | round }} {{ 3.14159 | round(2) }}", {}),
    # tests
    ("test_defined", "{{ x is defined }} {{ y is defined }} {{ y is undefined }} {{ d.k is defined }} {{ d.z is defined }}", {"x": None, "d": {"k": 1}}),
    ("test_none", "{{ x is none }} {{ 0 is none }} {{ y is none }}", {"x": None}),
    ("test_string", "{{ 'a' is string }} {{ 1 is string }} {{ [] is string }}", {}),
    ("test_number", "{{ 1 is number }} {{ 1.5 is number }} {{ true is number }} {{ '1' is number }} {{ 1 is integer }} {{ 1.0 is float }}", {}),
    ("test_mapping", "{{ {} is mapping }} {{ [] is mapping }} {{ d is mapping }}", {"d": {"a": 1}}),
    ("test_iterable", "{{ [] is iterable }} {{ 'a' is iterable }} {{ {} is iterable }} {{ 1 is iterable }} {{ none is iterable }}", {}),
    ("test_sequence", "{{ [] is sequence }} {{ 'a' is sequence }} {{ {} is sequence }} {{ 1 is sequence }} {{ missing is sequence }}", {}),
    ("test_true_false", "{{ true is true }} {{ 1 is true }} {{ false is false }} {{ 0 is false }} {{ x is true }} {{ x is not false }}", {"x": True}),
    ("test_odd_even_divisible", "{{ 3 is odd }} {{ 3 is even }} {{ 9 is divisibleby 3 }} {{ 10 is divisibleby(4) }}", {}),
    ("test_comparisons", "{{ 1 is eq 1 }} {{ 2 is gt 1 }} {{ 1 is lt 0 }} {{ 'a' is in 'abc' }} {{ 3 is ge 3 }} {{ x is sameas none }}", {"x": None}),
    ("test_not", "{{ 'x' is not string }} {{ missing is not defined }}", {}),
    # expressions
    ("inline_if", "{{ 'a' if x else 'b' }} {{ 'c' if not x else 'd' }} [{{ 'e' if false }}]", {"x": True}),
    ("in_not_in", "{{ 'b' in 'abc' }} {{ 2 in [1,2] }} {{ 'k' in d }} {{ 'z' not in d }} {{ 3 not in [1] }} {{ 'x' in missing }}", {"d": {"k": 1}}),
    ("slicing", "{{ 'hello'[1:3] }} {{ 'hello'[::-1] }} {{ 'hello'[-2:] }} {{ [1,2,3,4][::2] }} {{ [1,2,3][5:] }} {{ 'héllo'[:2] }} {{ [1,2,3,4,5][-1:0:-2] }}", {}),
    ("tilde_concat", "{{ 'a' ~ 1 ~ none ~ true ~ 1.0 ~ missing ~ [1] }}", {}),
    ("arithmetic", "{{ 1 + 2 }} {{ 7 - 10 }} {{ 3 * 4 }} {{ 7 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 2 ** -1 }} {{ 1.5 + 1 }}", {}),
    ("float_repr", "{{ 0.1 + 0.2 }} {{ 1e20 * 10 }} {{ 1 / 3 }} {{ 1e-5 }} {{ 2.0 }} {{ 100000000000000000.0 }} {{ 123456789.125 }} {{ -0.0 }}", {}),
    ("string_ops", "{{ 'ab' + 'cd' }} {{ 'ab' * 3 }} {{ [1] + [2] }} {{ [0] * 3 }}", {}),
    ("comparisons_chain", "{{ 1 < 2 < 3 }} {{ 1 < 3 < 2 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ 1 == 1.0 }} {{ 'a' != 'a' }} {{ none == none }}", {}),
    ("literals", "{{ [1, 'two', 3.0, none, true] }} {{ {'a': [1], 'b': {'c': none}} }} {{ (1, 2) | list }} {{ \"it's\" }} {{ 'say \"hi\"' }}", {}),
    ("string_escapes", "{{ 'tab\\there' }}|{{ 'nl\\nx' }}|{{ 'u\\u00e9' }}|{{ 'quote\\'s' }}", {}),
    ("attr_vs_item", "{{ d.a }} {{ d['a'] }} {{ d.get('a') }} {{ d.get('z', 'dflt') }} {{ d.get('z') }} {{ l[0] }} {{ l[-1] }} {{ l.1 }} [{{ l[9] }}]", {"d": {"a": 1}, "l": [10, 20]}),
    ("dict_methods", "{{ d.keys() | list }} {{ d.values() | list }} {% for k, v in d.items() %}{{ k }}{{ v }}{% endfor %}", {"d": {"a": 1, "b": 2}}),
    ("str_methods_startswith", "{{ s.startswith('ab') }} {{ s.endswith('yz') }} {{ s.startswith(('x', 'a')) }} {{ s.endswith('q') }}", {"s": "abcxyz"}),
    ("str_methods_split", "{{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} {{ 'a b c'.split(' ', 1) }} {{ 'x</think>y'.split('</think>')[-1] }} {{ 'a,b,c'.rsplit(',', 1) }}", {}),
    ("str_methods_strip", "[{{ '  x  '.strip() }}] [{{ '  x  '.lstrip() }}] [{{ '  x  '.rstrip() }}] [{{ '\\n\\nx\\n'.strip('\\n') }}] [{{ 'xxyxx'.strip('x') }}]", {}),
    ("str_methods_replace_case", "{{ 'aXbX'.replace('X', '-') }} {{ 'abc'.upper() }} {{ 'ABC'.lower() }} {{ 'hello world'.title() }} {{ 'hello'.capitalize() }}", {}),
    ("str_methods_find_count_join", "{{ 'hello'.find('l') }} {{ 'hello'.find('z') }} {{ 'hello'.count('l') }} {{ '-'.join(['a', 'b']) }}", {}),
    ("qwen_reasoning_split", "{%- set c = content %}{%- if '</think>' in c %}{%- set r = c.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') %}{%- set c = c.split('</think>')[-1].lstrip('\\n') %}{%- endif %}[{{ r }}][{{ c }}]", {"content": "<think>\nsteps\n</think>\n\nanswer"}),
    # whitespace control and HF environment
    ("ws_dash", "a  {{- ' b ' -}}  c\n  {%- if true -%}  d  {%- endif -%}  e", {}),
    ("ws_trim_blocks", "{% if true %}\nline\n{% endif %}\nend", {}),
    ("ws_lstrip_blocks", "x\n    {% if true %}\n    indented\n    {% endif %}\ny", {}),
    ("ws_plus_disables_lstrip", "x\n    {%+ if true %}y{% endif %}", {}),
    ("ws_comment", "a\n  {# comment #}\nb{#- c -#}  c", {}),
    ("ws_var_not_trimmed", "{{ 'v' }}\n  {{ 'w' }}\n", {}),
    ("ws_trailing_newline_dropped", "text\n", {}),
    ("ws_crlf", "a\r\nb{% if true %}\r\nc{% endif %}", {}),
    ("raise_exception_untaken", "{% if false %}{{ raise_exception('no') }}{% endif %}ok", {}),
    ("range_forms", "{{ range(3) | list }} {{ range(1, 4) | list }} {{ range(10, 0, -3) | list }} {{ range(0) | list }}", {}),
    ("dict_global", "{{ dict(a=1, b='x') }}", {}),
    ("output_values", "{{ none }} {{ true }} {{ false }} {{ 3 }} {{ 2.50 }} {{ 'é' }} {{ [] }} {{ {} }} [{{ missing }}]", {}),
    ("messages_loop_realistic", "{%- for message in messages %}{{ '<|im_start|>' + message.role + '\\n' + message.content | trim + '<|im_end|>' + '\\n' }}{%- endfor %}{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{%- endif %}", {"messages": MSGS, "add_generation_prompt": True}),
    ("tools_json_lines", "{%- for tool in tools %}\n{{- tool | tojson }}\n{%- endfor %}", {"tools": [WEATHER, PLAIN_TOOL]}),
    ("unicode_upper_len", "{{ 'straße' | upper }} {{ 'ÀÉÎ' | lower }} {{ '😊x' | length }} {{ '日本'[1] }}", {}),
    ("nested_data_access", "{{ a.b.c[1].d }} {{ a['b']['c'][0] }}", {"a": {"b": {"c": [0, {"d": "deep"}]}}}),
    ("bool_int_arith", "{{ true + 1 }} {{ true * 3 }} {{ 1 == true }}", {}),
    ("is_tests_on_messages", "{% for m in messages %}{{ m.content is string }}{{ m.tool_calls is defined }}{% endfor %}", {"messages": MSGS}),
    ("loop_last_separator", "{% for x in ['a', 'b', 'c'] %}{{ x }}{% if not loop.last %}, {% endif %}{% endfor %}", {}),
    ("set_ns_in_nested_loops", "{% set ns = namespace(t=0) %}{% for a in range(3) %}{% for b in range(a) %}{% set ns.t = ns.t + b %}{% endfor %}{% endfor %}{{ ns.t }}", {}),
    ("macro_with_loop_and_set", "{% macro rows(xs) %}{% set n = xs | length %}{% for x in xs %}{{ loop.index }}/{{ n }}:{{ x }} {% endfor %}{% endmacro %}{{ rows(['a', 'b']) }}", {}),
    # errors (jinja2 raises; the expectation is an error, and for raise_exception its message)
    ("err_raise_exception", "{{ raise_exception('Custom failure: ' ~ 42) }}", {}),
    ("err_raise_in_loop", "{% for m in messages %}{% if m.role == 'assistant' %}{{ raise_exception('bad role ' + m.role) }}{% endif %}{% endfor %}", {"messages": MSGS}),
    ("err_unknown_filter", "{{ 1 | frobnicate }}", {}),
    ("err_unknown_test", "{{ 1 is frobnicated }}", {}),
    ("err_undefined_attr_of_undefined", "{{ missing.attr }}", {}),
    ("err_add_str_int", "{{ 'a' + 1 }}", {}),
    ("err_division_by_zero", "{{ 1 / 0 }}", {}),
    ("err_items_on_string", "{% for k, v in 'abc' | items %}{% endfor %}", {}),
    ("err_syntax", "{% if x %}unclosed", {}),
    ("err_unknown_tag", "{% include 'other.jinja' %}", {}),
    ("err_range_too_big", "{{ range(1000000) | length }}", {}),
    ("err_call_undefined", "{{ nothing() }}", {}),
    ("err_unpack", "{% for a, b in [[1, 2, 3]] %}{% endfor %}", {}),
    ("err_namespace_underscore", "{% set ns = namespace() %}{% set ns._x = 1 %}", {}),
    ("err_tojson_undefined", "{{ missing | tojson }}", {}),
]


def features():
    out = []
    for name, template, variables in FEATURES:
        entry = {"name": name, "template": template, "vars": variables}
        try:
            entry["output"] = _compile_jinja_template(template).render(**variables)
        except Exception as e:  # noqa: BLE001
            entry["error"] = str(e)
            entry["error_type"] = type(e).__name__
        out.append(entry)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(REPO, "tests", "fixtures", "chat_templates"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        corpus = hf_corpus(work)
    feats = features()
    with open(os.path.join(args.out, "hf_corpus.json"), "w", encoding="utf-8") as f:
        json.dump(corpus, f, ensure_ascii=False, indent=1)
        f.write("\n")
    with open(os.path.join(args.out, "features.json"), "w", encoding="utf-8") as f:
        json.dump({"transformers": transformers.__version__, "jinja2": jinja2.__version__, "cases": feats}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    errors = sum("error" in c for c in corpus["cases"])
    print(f"hf_corpus.json: {len(corpus['cases'])} cases ({errors} errors); features.json: {len(feats)} cases "
          f"({sum('error' in c for c in feats)} errors)")


if __name__ == "__main__":
    main()
