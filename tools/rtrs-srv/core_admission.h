// SPDX-License-Identifier: GPL-2.0
// The tool's door to the core's own parser of the admission rules
// (src/core/admission.cpp, core::Policy), so that `rtrs-srv admission set`
// refuses exactly what the module would, with the module's own words.
// core_admission.cpp is built as the module's core is (the C++ subset,
// freestanding): this header uses nothing but the compiler's own types, so
// both sides include it.
#pragma once

namespace rtrs_srv::core_admission {

// Room for the canonical rules (the module refuses rules that take more
// than RTRS_CORE_ADMISSION_SHOW_MAX - 256 bytes shown) and their NUL.
inline constexpr __SIZE_TYPE__ kRulesCap = 4096;
// Room for a refusal's message: "line N: why".
inline constexpr __SIZE_TYPE__ kMessageCap = 256;

// Reads `len` bytes of rules as the module does: core::Policy::parse(),
// then the module's check that the rules in effect show whole in a page.
// True when the module would take them: `rules` (kRulesCap bytes) then
// holds them in the canonical form, core::Policy::format()'s (one rule a
// line, each ended by a newline; empty for the default policy). False
// with `msg` (kMessageCap bytes) saying why, as the module logs it.
bool canonical(const char* text, __SIZE_TYPE__ len, char* rules, char* msg);

// The core's words for the refusals of the reason it names `name`
// (core::verdict_name(): "not-allowed", "sessions", ...), as its log lines
// say them; nullptr for a name it does not know.
const char* reason_words(const char* name);

}  // namespace rtrs_srv::core_admission
