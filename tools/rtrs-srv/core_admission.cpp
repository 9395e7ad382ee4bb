// SPDX-License-Identifier: GPL-2.0
// core_admission.h: the core's parser, called from the tool. Built with the
// core's flags (the C++ subset, no C or C++ library), with the few calls of
// the kernel environment the parser's objects refer to (none is made while
// parsing or formatting a policy).
#include "core_admission.h"

#include "core/admission.h"
#include "rt/env.h"
#include "core/env.h"

namespace rtrs_srv::core_admission {

static_assert(kRulesCap >= core::kAdmitShowRules + 1, "the canonical rules must fit");

bool canonical(const char* text, __SIZE_TYPE__ len, char* rules, char* msg) {
    // A fixed-size object of a few KiB: on the stack, as a program may.
    core::Policy p;
    rules[0] = '\0';
    msg[0] = '\0';
    if (!p.parse(text, len, msg, kMessageCap).ok()) return false;
    // The module's own check (core::Module::set_admission): the rules must
    // show whole in a page.
    if (p.format_within(rules, msg, kMessageCap).ok()) return true;
    rules[0] = '\0';
    return false;
}

const char* reason_words(const char* name) {
    for (rt::u32 v = 1; v < core::kVerdicts; ++v) {
        const char* n = core::verdict_name(static_cast<core::Verdict>(v));
        rt::usize i = 0;
        while (n[i] && n[i] == name[i]) ++i;
        if (n[i] == name[i]) return core::verdict_reason(static_cast<core::Verdict>(v));
    }
    return nullptr;
}

}  // namespace rtrs_srv::core_admission

// The kernel environment, as far as the objects linked for the parser
// (admission, addr, log, wire) refer to it. Parsing and formatting call
// none of it; a call would be a bug of the tool, hence the traps.
extern "C" {
void rtrs_env_free(void*) { __builtin_trap(); }
void rtrs_env_warn(const char*) { __builtin_trap(); }
void rtrs_env_log(int, const char*) {}
void rtrs_env_log_ratelimited(int, const char*) {}
__UINT64_TYPE__ rtrs_env_now_ms(void) { return 0; }
}
