#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Mutation testing of the core (src/core) against the host unit tests.

Makes mechanical mutants of the core's sources, builds the host unit tests
(rtrs_unit_tests) with each, runs them and reports which mutants survive:
a mutation score per file and the survivors, each with the id that re-runs
it. doc/testing.md ("Mutation testing") says what the operators are, what
is left out and why, and the last campaign's figures.

  mutants.py list [FILE...]                  the mutants, with their ids
  mutants.py run [--all|FILE...|--id ID...]  build and test them
  mutants.py quick                           the sample of the default run
  mutants.py show ID                         the mutant's diff

Ids: FILE:LINE:OP:N (N: the Nth mutant of OP on that line), for the
source as it is now; every mutant also has a key that does not depend on
line numbers, FILE:OP:HASH:N (HASH: of the line's text), which is what
tools/mutants/equivalent.txt (the known equivalent mutants, each with its
reason) lists. Either one names a mutant to `run --id` and `show`.

Each mutant is built in a copy of the checkout (WORK/src, WORK/build:
WORK is build/mutants unless --work says otherwise), without sanitizers,
at -O1, and rtrs_unit_tests runs once with --gtest_fail_fast under a time
limit: a failed test, a crash or the limit (a mutant that loops) kills it;
a mutant that does not compile (the core builds with -Werror) is
stillborn and not counted. The checkout itself is never written.
"""

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORE = "src/core"
EQUIV = os.path.join(TOP, "tools", "mutants", "equivalent.txt")
KILLED = os.path.join(TOP, "tools", "mutants", "killed.txt")
TARGET = "rtrs_unit_tests"

# --- a small C++ lexer ---------------------------------------------------------

PUNCT = sorted("""
<<= >>= <=> ... -> ++ -- << >> <= >= == != && || += -= *= /= %= &= |= ^= ::
{ } ( ) [ ] ; : , . ? ~ ! + - * / % & | ^ = < > #
""".split(), key=len, reverse=True)

ASSIGN_OPS = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}
KEYWORDS = {"return", "break", "continue", "goto", "static_assert", "using", "typedef",
            "case", "default", "do", "else", "if", "for", "while", "switch", "namespace",
            "template", "class", "struct", "enum", "union", "asm", "__asm__"}
# Statements that only log (their text is noise as a mutant: see doc/testing.md).
LOG_STARTS = ("Log(", "core::Log(")


class Tok:
    __slots__ = ("kind", "text", "start", "end", "line")

    def __init__(self, kind, text, start, end, line):
        self.kind, self.text, self.start, self.end, self.line = kind, text, start, end, line

    def __repr__(self):
        return f"{self.kind}:{self.text}@{self.line}"


IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
NUMBER = re.compile(r"(0[xX][0-9a-fA-F']+|[0-9][0-9']*(\.[0-9]+)?([eE][-+]?[0-9]+)?)[uUlLfF]*")


def lex(src):
    """Tokens of src without comments, preprocessor lines and white space."""
    toks = []
    i, n, line = 0, len(src), 1
    at_line_start = True
    while i < n:
        c = src[i]
        if c == "\n":
            line += 1
            i += 1
            at_line_start = True
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if c == "#" and at_line_start:
            # A preprocessor line, with its continuations.
            while i < n and src[i] != "\n":
                if src[i] == "\\" and i + 1 < n and src[i + 1] == "\n":
                    line += 1
                    i += 1
                i += 1
            continue
        at_line_start = False
        if src.startswith("//", i):
            while i < n and src[i] != "\n":
                i += 1
            continue
        if src.startswith("/*", i):
            j = src.index("*/", i + 2) + 2
            line += src.count("\n", i, j)
            i = j
            continue
        if c in "\"'":
            j = i + 1
            while src[j] != c:
                j += 2 if src[j] == "\\" else 1
            toks.append(Tok("str", src[i:j + 1], i, j + 1, line))
            i = j + 1
            continue
        m = IDENT.match(src, i)
        if m:
            # A string literal's prefix (u8"...", R"(...)") is not needed here.
            toks.append(Tok("id", m.group(), i, m.end(), line))
            i = m.end()
            continue
        m = NUMBER.match(src, i)
        if m:
            toks.append(Tok("num", m.group(), i, m.end(), line))
            i = m.end()
            continue
        for p in PUNCT:
            if src.startswith(p, i):
                toks.append(Tok("p", p, i, i + len(p), line))
                i += len(p)
                break
        else:
            raise ValueError(f"cannot lex {src[i:i+20]!r} at line {line}")
    return toks


def match_close(toks, i):
    """Index of the bracket closing toks[i]."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    o, c = toks[i].text, pairs[toks[i].text]
    d = 0
    for j in range(i, len(toks)):
        if toks[j].text == o:
            d += 1
        elif toks[j].text == c:
            d -= 1
            if d == 0:
                return j
    raise ValueError(f"unbalanced {o} at line {toks[i].line}")


def code_mask(toks):
    """For each token: True when it is inside a function body (or a lambda's)."""
    mask = [False] * len(toks)
    stack = []  # per open brace: is it code?
    for i, t in enumerate(toks):
        if t.text == "{":
            inside = bool(stack) and stack[-1]
            if not inside:
                # A function body: the brace follows ')' (maybe with
                # const/noexcept/override/final, or a trailing return type).
                j = i - 1
                while j >= 0 and toks[j].text in ("const", "noexcept", "override", "final", "mutable"):
                    j -= 1
                inside = j >= 0 and toks[j].text == ")"
                # A constructor's member initializers end with ')' or '}'
                # too: '... : a_(x), b_{y} {'.
                if not inside and j >= 0 and toks[j].text == "}":
                    inside = _ctor_init_list_end(toks, j)
            stack.append(inside)
            mask[i] = inside
        elif t.text == "}":
            mask[i] = bool(stack) and stack[-1]
            if stack:
                stack.pop()
        else:
            mask[i] = bool(stack) and stack[-1]
    return mask


def _ctor_init_list_end(toks, j):
    # Walk back over 'name{...}' / 'name(...)' groups separated by ',' to a ':'
    # that follows ')'.
    depth = 0
    k = j
    while k >= 0:
        x = toks[k].text
        if x in ")}]":
            depth += 1
        elif x in "({[":
            depth -= 1
            if depth < 0:
                return False
        elif depth == 0 and x == ";":
            return False
        elif depth == 0 and x == ":" and k > 0 and toks[k - 1].text == ")":
            return True
        k -= 1
    return False


# --- the mutants -----------------------------------------------------------------

class Mutant:
    __slots__ = ("file", "line", "op", "idx", "start", "end", "new", "orig", "key", "desc")

    @property
    def id(self):
        return f"{self.file}:{self.line}:{self.op}:{self.idx}"


ROR = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
REL = set(ROR)


def statement_spans(toks, mask):
    """(first, last) token indexes of each simple statement in code: from a
    statement start to its ';' at depth 0, with no '{' at depth 0 between.
    The body of an if/else/for/while without braces counts as a statement."""
    out = []
    n = len(toks)

    def starts():
        for i in range(n):
            if not mask[i]:
                continue
            prev = toks[i - 1].text if i else ""
            if prev in (";", "{", "}") and toks[i].text not in ("}", "{", ";"):
                # not inside a for's header: '(' depth must be 0 relative to the block
                yield i

    seen = set()
    work = list(starts())
    while work:
        i = work.pop()
        if i in seen or i >= n:
            continue
        seen.add(i)
        t = toks[i].text
        if t in ("if", "while", "for", "switch") and i + 1 < n and toks[i + 1].text == "(":
            j = match_close(toks, i + 1) + 1
            if j < n and toks[j].text not in ("{", ";"):
                work.append(j)
            continue
        if t in ("else", "do"):
            if i + 1 < n and toks[i + 1].text not in ("{", ";"):
                work.append(i + 1)
            continue
        if t == "case" or t == "default":
            # case X: stmt
            j = i
            while j < n and toks[j].text != ":":
                j += 1
            if j + 1 < n and toks[j + 1].text not in ("{", "}", ";", "case", "default"):
                work.append(j + 1)
            continue
        if toks[i].kind == "id" and i + 1 < n and toks[i + 1].text == ":" and t not in KEYWORDS:
            continue  # a label
        # to the ';'
        d = 0
        j = i
        ok = True
        while j < n:
            x = toks[j].text
            if x in "([":
                d += 1
            elif x in ")]":
                d -= 1
                if d < 0:
                    ok = False  # inside a for's header
                    break
            elif x == "{" and d == 0:
                ok = False
                break
            elif x == "}" and d == 0:
                ok = False
                break
            elif x == ";" and d == 0:
                break
            j += 1
        if ok and j < n:
            out.append((i, j))
    out.sort()
    return out


def is_declaration(toks, a, b):
    # Tokens before the first '=', '(' or '{' at the top: a type then a name.
    prev = None
    for k in range(a, b):
        x = toks[k]
        if x.text in ("=", "(", "{", "[") or x.text in ASSIGN_OPS:
            break
        if x.kind == "id" and prev is not None:
            if prev.kind == "id" or prev.text in (">", "&", "*", "&&"):
                if prev.text in ("*", "&") and (k - 2 < a or toks[k - 2].kind not in ("id",) and toks[k - 2].text != ">"):
                    pass  # '*p = ...': a dereference
                else:
                    return True
        prev = x
    return False


def top_level(toks, a, b):
    d = 0
    for k in range(a, b):
        x = toks[k].text
        if x in "([{":
            d += 1
        elif x in ")]}":
            d -= 1
        elif d == 0:
            yield k


def line_text(src_lines, line):
    return " ".join(src_lines[line - 1].split())


def spaced(src, t):
    """True when the operator token t has white space on both sides."""
    return src[t.start - 1:t.start].isspace() and src[t.end:t.end + 1].isspace()


def mutants_of(path, rel):
    src = open(path).read()
    toks = lex(src)
    mask = code_mask(toks)
    lines = src.split("\n")
    spans = statement_spans(toks, mask)
    # Tokens of statements that only log, and of static_asserts: left alone.
    quiet = [False] * len(toks)
    stmt_of = {}
    # Names of the Log objects a function builds its line in ('Log l(kErr);').
    log_vars = {toks[i + 1].text for i in range(len(toks) - 2)
                if toks[i].text == "Log" and toks[i + 1].kind == "id" and toks[i + 2].text in ("(", "{")}
    for a, b in spans:
        head = "".join(t.text for t in toks[a:a + 4])
        if head.startswith(LOG_STARTS) or toks[a].text == "static_assert" or \
                (toks[a].text in log_vars and toks[a + 1].text == "."):
            for k in range(a, b + 1):
                quiet[k] = True
        stmt_of[a] = b
    for i, t in enumerate(toks):
        if t.text == "static_assert":
            j = match_close(toks, i + 1)
            for k in range(i, j + 1):
                quiet[k] = True

    raw = []  # (line, op, start, end, new, desc)

    def add(line, op, start, end, new):
        raw.append((line, op, start, end, new))

    for i, t in enumerate(toks):
        if not mask[i] or quiet[i]:
            continue
        x = t.text
        prev = toks[i - 1] if i else None
        # relational operator flips; '<' '>' only as binary operators (spaced),
        # never a template's brackets
        if x in REL and (x not in ("<", ">") or spaced(src, t)) and not (prev and prev.text == "template"):
            add(t.line, "ror", t.start, t.end, ROR[x])
            # a bound moved by one: an integer literal beside the operator
            for side in (i - 1, i + 1):
                if 0 <= side < len(toks) and toks[side].kind == "num" and not quiet[side]:
                    lit = toks[side]
                    v = _int_value(lit.text)
                    if v is None:
                        continue
                    if side == i - 1 and i - 2 >= 0 and toks[i - 2].text in (".", "->", "::"):
                        continue
                    if side == i + 1 and i + 2 < len(toks) and toks[i + 2].text in ("(", "[", ".", "::"):
                        continue
                    suffix = re.sub(r"^[0-9a-fA-Fx']+", "", lit.text) if not lit.text.lower().startswith("0x") else re.sub(r"^0[xX][0-9a-fA-F']+", "", lit.text)
                    for delta in (1, -1):
                        if v + delta < 0:
                            continue
                        add(lit.line, "bound", lit.start, lit.end, f"{v + delta}{suffix}")
        elif x in ("&&", "||") and spaced(src, t):
            add(t.line, "logic", t.start, t.end, "||" if x == "&&" else "&&")
        elif x == "!":
            add(t.line, "not", t.start, t.end, "")

    for a, b in spans:
        if quiet[a] or not mask[a]:
            continue
        first = toks[a].text
        if first == "return":
            _return_mutants(toks, a, b, add)
            continue
        if first in KEYWORDS or first in ("delete", "throw"):
            continue
        if first == "RT_TRY" and toks[a + 1].text == "(":
            # the statement dropped, and its result ignored
            add(toks[a].line, "stmt", toks[a].start, toks[b].end, "{}")
            c = match_close(toks, a + 1)
            inner = src[toks[a + 2].start:toks[c - 1].end]
            add(toks[a].line, "ignore", toks[a].start, toks[c].end, f"(void)({inner})")
            continue
        if is_declaration(toks, a, b):
            _ignore_mutants(src, toks, a, b, add)
            continue
        tops = list(top_level(toks, a, b))
        texts = [toks[k].text for k in tops]
        is_assign = any(x in ASSIGN_OPS for x in texts) or first in ("++", "--") or \
            (len(texts) >= 2 and texts[-1] in ("++", "--"))
        is_call = "(" in [toks[k].text for k in range(a, b)]
        if is_assign or is_call:
            add(toks[a].line, "stmt", toks[a].start, toks[b].end, "{}")
        if is_assign:
            _ignore_mutants(src, toks, a, b, add)
    # 'if (int err = call(...))': the call's result ignored
    for i, t in enumerate(toks):
        if mask[i] and t.text == "if" and i + 3 < len(toks) and toks[i + 1].text == "(" \
                and toks[i + 2].text == "int" and toks[i + 3].kind == "id" and toks[i + 4].text == "=":
            c = match_close(toks, i + 1)
            e = c
            for k in range(i + 5, c):
                if toks[k].text == ";" :
                    e = k
                    break
            expr = src[toks[i + 5].start:toks[e - 1].end]
            if "(" in expr:
                add(toks[i + 5].line, "ignore", toks[i + 5].start, toks[e - 1].end, f"((void)({expr}), 0)")

    out = []
    counts = {}
    seen_lines = {}
    line_keys = {}
    for line, op, start, end, new in sorted(raw, key=lambda r: (r[0], r[2], r[1], r[4])):
        if (line, start, end, new) in {(m.line, m.start, m.end, m.new) for m in out[-8:]}:
            continue
        k = (line, op)
        idx = counts.get(k, 0)
        counts[k] = idx + 1
        if line not in line_keys:
            text = line_text(lines, line)
            seen_lines[text] = seen_lines.get(text, 0) + 1
            h = hashlib.sha1(f"{text}#{seen_lines[text]}".encode()).hexdigest()[:8]
            line_keys[line] = h
        m = Mutant()
        m.file, m.line, m.op, m.idx = rel, line, op, idx
        m.start, m.end, m.new, m.orig = start, end, new, src[start:end]
        m.key = f"{rel}:{op}:{line_keys[line]}:{idx}"
        out.append(m)
    return src, out


def _int_value(text):
    t = text.replace("'", "").rstrip("uUlL")
    try:
        return int(t, 0) if not re.match(r"^0[0-7]+$", t) else int(t, 8)
    except ValueError:
        return None


def _return_mutants(toks, a, b, add):
    # return EXPR;  -> another value
    if b == a + 1:
        return
    expr = toks[a + 1:b]
    s, e = expr[0].start, expr[-1].end
    first = expr[0].text
    if len(expr) == 1 and first in ("true", "false"):
        add(toks[a].line, "return", s, e, "false" if first == "true" else "true")
    elif len(expr) == 1 and expr[0].kind == "num":
        v = _int_value(first)
        add(toks[a].line, "return", s, e, "1" if v == 0 else "0")
    elif first == "nullptr" or any(t.text == "{" for t in expr):
        return
    elif expr[0].kind == "id" and len(expr) > 1 and expr[1].text == "{":
        return
    else:
        add(toks[a].line, "return", s, e, "0")


def _ignore_mutants(src, toks, a, b, add):
    # 'int err = call(...);', 'err = call(...);': the call's result ignored.
    for k in range(a, b):
        if toks[k].text == "=":
            break
    else:
        return
    decl = [t.text for t in toks[a:k]]
    if decl and decl[0] in ("const",):
        decl = decl[1:]
    if not (decl in (["int", decl[-1]],) or (len(decl) == 1 and decl[0] in ("err", "ret", "rc"))):
        return
    if k + 1 >= b or not any(t.text == "(" for t in toks[k + 1:b]):
        return
    if toks[k + 1].kind != "id":
        return
    expr = src[toks[k + 1].start:toks[b - 1].end]
    add(toks[k + 1].line, "ignore", toks[k + 1].start, toks[b - 1].end, f"((void)({expr}), 0)")


def core_files(top=TOP):
    d = os.path.join(top, CORE)
    return sorted(f for f in os.listdir(d) if f.endswith((".cpp", ".h")))


def all_mutants(files=None, top=TOP):
    out = []
    for f in files or core_files(top):
        rel = f"{CORE}/{f}" if "/" not in f else f
        _, ms = mutants_of(os.path.join(top, rel), os.path.basename(rel))
        out.extend(ms)
    return out


def apply(src, m):
    return src[:m.start] + m.new + src[m.end:]


# --- equivalents -------------------------------------------------------------

def load_equivalents(path=EQUIV):
    eq = {}
    if not os.path.exists(path):
        return eq
    for raw in open(path):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, _, why = line.partition(" ")
        eq[key] = why.strip().lstrip("#").strip()
    return eq


# --- building and running -------------------------------------------------------

def sh(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


class Worker:
    """A copy of the checkout and a build of the unit tests in it."""

    def __init__(self, work, name, nice, log):
        self.dir = os.path.join(work, name)
        self.src = os.path.join(self.dir, "src")
        self.build = os.path.join(self.dir, "build")
        self.nice = nice
        self.log = log
        self.timeout = None

    def prepare(self):
        files = sh(["git", "-C", TOP, "ls-files", "-z", "--cached", "--others", "--exclude-standard"]).stdout
        names = [f for f in files.split("\0") if f]
        os.makedirs(self.src, exist_ok=True)
        for f in names:
            s = os.path.join(TOP, f)
            d = os.path.join(self.src, f)
            if not os.path.isfile(s):
                continue
            if os.path.exists(d) and open(s, "rb").read() == open(d, "rb").read():
                continue
            os.makedirs(os.path.dirname(d), exist_ok=True)
            # A fresh time stamp: an older one than the object built from
            # what was there would leave that object in place.
            shutil.copy(s, d)
        # The core's sources as they are (a run that stopped left a mutant in place).
        for f in core_files(TOP):
            s, d = os.path.join(TOP, CORE, f), os.path.join(self.src, CORE, f)
            if open(s).read() != open(d).read():
                shutil.copy(s, d)
        if not os.path.exists(os.path.join(self.build, "build.ninja")):
            ld = ["-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld"] if shutil.which("ld.lld") else []
            gen = ["-G", "Ninja"] if shutil.which("ninja") else []
            r = sh(["cmake", "-S", self.src, "-B", self.build, *gen, "-DRTRS_SANITIZE=OFF",
                    "-DRTRS_COVERAGE=OFF", "-DRTRS_GUEST_TESTS=OFF", "-DCMAKE_BUILD_TYPE=None",
                    "-DCMAKE_CXX_FLAGS=-O1", "-DCMAKE_C_FLAGS=-O1", *ld])
            if r.returncode:
                raise SystemExit(f"mutants: configuring {self.build} failed:\n{r.stdout[-3000:]}")
        t = time.time()
        ok, out = self.make()
        if not ok:
            raise SystemExit(f"mutants: the unmutated build failed:\n{out[-3000:]}")
        self.build_s = time.time() - t
        t = time.time()
        rc, out = self.test(timeout=600)
        self.test_s = time.time() - t
        if rc != 0:
            # A run that was stopped may have left a mutant's object behind:
            # the core built again from its sources, once.
            for f in core_files(TOP):
                os.utime(os.path.join(self.src, CORE, f))
            ok, out = self.make()
            t = time.time()
            rc, out = self.test(timeout=600)
            self.test_s = time.time() - t
        if rc != 0:
            failed = "\n".join(l for l in out.splitlines() if "FAILED" in l or "Failure" in l)
            raise SystemExit(f"mutants: the unmutated tests fail in {self.dir} (exit {rc}):\n{failed[-3000:]}")
        # A mutant that loops is killed by the limit: several times a clean run.
        self.timeout = max(30.0, 8 * self.test_s)

    def make(self):
        r = sh(["nice", "-n", str(self.nice), "cmake", "--build", self.build, "--target", TARGET, "-j2"])
        return r.returncode == 0, r.stdout

    def test(self, timeout, exe=None):
        exe = exe or os.path.join(self.build, TARGET)
        try:
            r = subprocess.run(["nice", "-n", str(self.nice), exe, "--gtest_fail_fast", "--gtest_brief=1"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=timeout, errors="replace", cwd=self.build)
            return r.returncode, r.stdout
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            return "timeout", out

    def build_mutant(self, m, orig_src, slot):
        """Builds m; returns (result so far, the test binary's copy or None)."""
        path = os.path.join(self.src, CORE, m.file)
        with open(path, "w") as f:
            f.write(apply(orig_src, m))
        t = time.time()
        ok, out = self.make()
        build_s = time.time() - t
        res = {"id": m.id, "key": m.key, "file": m.file, "line": m.line, "op": m.op,
               "orig": m.orig, "new": m.new, "build_s": round(build_s, 2)}
        if not ok:
            errs = [l.strip() for l in out.splitlines() if "error:" in l]
            res.update(status="stillborn", why=(errs[0] if errs else out.strip()[-300:])[:300])
            return res, None
        # The tests run from a copy, while the next mutant builds.
        exe = os.path.join(self.dir, f"bin{slot}")
        shutil.copy2(os.path.join(self.build, TARGET), exe)
        return res, exe

    def test_mutant(self, res, exe):
        t = time.time()
        rc, out = self.test(self.timeout, exe)
        res["test_s"] = round(time.time() - t, 2)
        if rc == 0:
            res["status"] = "survived"
        else:
            failed = [f.rstrip(",") for f in re.findall(r"^\[  FAILED  \] (\S+)", out, re.M)]
            if rc == "timeout":
                why = f"timeout ({self.timeout:.0f} s)"
            elif isinstance(rc, int) and rc < 0:
                why = f"signal {-rc}" + (f" in {failed[0]}" if failed else "")
            else:
                why = failed[0] if failed else f"exit {rc}: " + " / ".join(out.strip().splitlines()[-2:])[:200]
            res.update(status="killed", why=why)
        return res

    def restore(self, file, orig_src):
        path = os.path.join(self.src, CORE, file)
        with open(path, "w") as f:
            f.write(orig_src)


def run_mutants(ms, work, jobs, nice, results_path, eq, progress=True):
    """Runs ms on `jobs` workers, files split between them; appends each
    result to results_path (JSON lines) as it comes; returns the results."""
    import threading
    os.makedirs(work, exist_ok=True)
    by_file = {}
    for m in ms:
        by_file.setdefault(m.file, []).append(m)
    files = sorted(by_file, key=lambda f: -len(by_file[f]))
    # Split by count, largest first.
    shares = [[] for _ in range(jobs)]
    load = [0] * jobs
    for f in files:
        k = load.index(min(load))
        shares[k].append(f)
        load[k] += len(by_file[f])
    shares = [s for s in shares if s]
    workers = [Worker(work, f"w{k}", nice, None) for k in range(len(shares))]
    t0 = time.time()
    errs = []

    results = []
    lock = threading.Lock()
    out = open(results_path, "a") if results_path else None
    total = len(ms)

    def done(r, m):
        if r["status"] == "survived" and m.key in eq:
            r["status"] = "equivalent"
            r["why"] = eq[m.key]
        with lock:
            results.append(r)
            if out:
                out.write(json.dumps(r) + "\n")
                out.flush()
            if progress:
                print(f"[{len(results)}/{total} {time.time() - t0:.0f} s] {r['status']:10} "
                      f"{r['id']} {r['orig']!r} -> {r['new']!r}"
                      + (f"  ({r.get('why')})" if r.get("why") else ""), flush=True)

    def go(w, share):
        try:
            w.prepare()
        except SystemExit as e:
            print(e, flush=True)
            errs.append(str(e))
            return
        if progress:
            print(f"mutants: {w.dir}: unmutated build {w.build_s:.1f} s, tests {w.test_s:.1f} s "
                  f"(time limit {w.timeout:.0f} s); {sum(len(by_file[f]) for f in share)} mutants",
                  flush=True)
        # A mutant's tests run in a thread of their own while the next one
        # builds (two binaries in turn).
        pending = None
        slot = 0
        for f in share:
            src = open(os.path.join(w.src, CORE, f)).read()
            try:
                for m in by_file[f]:
                    r, exe = w.build_mutant(m, src, slot)
                    if exe is None:
                        done(r, m)
                        continue
                    if pending:
                        pending.join()
                    pending = threading.Thread(target=lambda r=r, exe=exe, m=m: done(w.test_mutant(r, exe), m))
                    pending.start()
                    slot ^= 1
            finally:
                w.restore(f, src)
        if pending:
            pending.join()

    threads = [threading.Thread(target=go, args=(w, s)) for w, s in zip(workers, shares)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if out:
        out.close()
    if errs:
        raise SystemExit(errs[0])
    return results, time.time() - t0


def report(results, eq, elapsed=None, file=sys.stdout):
    by = {}
    for r in results:
        by.setdefault(r["file"], []).append(r)
    p = lambda *a: print(*a, file=file)
    p("| file | mutants | killed | survived | equivalent | stillborn | score |")
    p("|---|---:|---:|---:|---:|---:|---:|")
    tot = {"n": 0, "killed": 0, "survived": 0, "equivalent": 0, "stillborn": 0}
    for f in sorted(by):
        rs = by[f]
        c = {s: sum(1 for r in rs if r["status"] == s) for s in ("killed", "survived", "equivalent", "stillborn")}
        tot["n"] += len(rs)
        for s in c:
            tot[s] += c[s]
        den = c["killed"] + c["survived"]
        score = f"{100.0 * c['killed'] / den:.1f} %" if den else "-"
        p(f"| {f} | {len(rs)} | {c['killed']} | {c['survived']} | {c['equivalent']} | {c['stillborn']} | {score} |")
    den = tot["killed"] + tot["survived"]
    score = f"{100.0 * tot['killed'] / den:.1f} %" if den else "-"
    p(f"| all | {tot['n']} | {tot['killed']} | {tot['survived']} | {tot['equivalent']} | {tot['stillborn']} | {score} |")
    p("")
    p("score: killed / (killed + survived); equivalent mutants (tools/mutants/equivalent.txt) "
      "and stillborn ones (do not compile) are not counted.")
    surv = [r for r in results if r["status"] == "survived"]
    if surv:
        p("")
        p(f"survivors ({len(surv)}):")
        for r in sorted(surv, key=lambda r: (r["file"], r["line"], r["op"], r["id"])):
            p(f"  {r['id']}  key {r['key']}  {r['orig']!r} -> {r['new']!r}")
    if elapsed is not None:
        built = [r for r in results if r["status"] != "stillborn"]
        if built:
            per = sum(r["build_s"] + r.get("test_s", 0) for r in built) / len(built)
            p("")
            p(f"{len(results)} mutants in {elapsed:.0f} s; one compiled mutant took {per:.1f} s "
              f"(build and tests) on average")


# --- choosing mutants ---------------------------------------------------------------

def find(ms, ids):
    want = set(ids)
    got = [m for m in ms if m.id in want or m.key in want]
    missing = want - {m.id for m in got} - {m.key for m in got}
    if missing:
        raise SystemExit("mutants: no such mutant: " + ", ".join(sorted(missing)))
    return got


def stratified(pool, n, rng):
    """n mutants of pool, each file's share in proportion to its mutants
    (at least one of each file while n allows), in file order."""
    by = {}
    for m in pool:
        by.setdefault(m.file, []).append(m)
    if n >= len(pool):
        return list(pool)
    files = sorted(by)
    want = {f: n * len(by[f]) / len(pool) for f in files}
    take = {f: min(len(by[f]), max(1, int(want[f]))) for f in files}
    # The rest by the largest remainders, drawn in a seeded order.
    order = sorted(files, key=lambda f: (-(want[f] - int(want[f])), rng.random()))
    while sum(take.values()) < n:
        grew = False
        for f in order:
            if sum(take.values()) >= n:
                break
            if take[f] < len(by[f]):
                take[f] += 1
                grew = True
        if not grew:
            break
    while sum(take.values()) > n:
        f = max(files, key=lambda f: take[f])
        take[f] -= 1
    out = []
    for f in files:
        out.extend(sorted(rng.sample(by[f], take[f]), key=lambda m: (m.line, m.op, m.idx)))
    return out


def changed_core_lines(base_ref):
    """{core file: set of its lines added or changed} since the merge base
    of HEAD and base_ref (committed or not); None when there is no base."""
    r = sh(["git", "-C", TOP, "merge-base", "HEAD", base_ref])
    if r.returncode:
        return None
    base = r.stdout.strip()
    r = sh(["git", "-C", TOP, "diff", "-U0", base, "--", CORE])
    out, cur = {}, None
    for line in r.stdout.splitlines():
        if line.startswith("+++ "):
            name = line[4:]
            cur = os.path.basename(name) if name.startswith("b/" + CORE + "/") else None
        elif line.startswith("@@") and cur:
            m = re.search(r"\+(\d+)(?:,(\d+))?", line)
            start, n = int(m.group(1)), int(m.group(2) if m.group(2) is not None else 1)
            out.setdefault(cur, set()).update(range(start, start + n))
    return {f: l for f, l in out.items() if l and os.path.exists(os.path.join(TOP, CORE, f))}


def load_killed(path=KILLED):
    if not os.path.exists(path):
        return set()
    return {l.split()[0] for l in open(path) if l.strip() and not l.startswith("#")}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    pl = sub.add_parser("list")
    pl.add_argument("files", nargs="*")
    pl.add_argument("--count", action="store_true", help="only the counts per file and operator")
    ps = sub.add_parser("show")
    ps.add_argument("ids", nargs="+")
    for name in ("run", "quick"):
        p = sub.add_parser(name)
        p.add_argument("files", nargs="*")
        p.add_argument("--work", default=os.path.join(TOP, "build", "mutants"))
        p.add_argument("--jobs", type=int, default=1)
        p.add_argument("--nice", type=int, default=10)
        p.add_argument("--results", help="append each result to this file (JSON lines)")
        p.add_argument("--report", help="write the report here too")
        p.add_argument("--id", nargs="+", default=[], help="only these mutants (ids or keys)")
        p.add_argument("--sample", type=int, help="a seeded sample of this many")
        p.add_argument("--seed", default=None)
        p.add_argument("--op", action="append", help="only this operator (repeatable)")
        p.add_argument("--skip-done", action="store_true", help="skip the mutants --results has")
    pq = sub.choices["quick"]
    pq.add_argument("--base", default="main", help="the branch whose merge base is the change's start")
    # (the sample: 20 of a change's lines; 10 of killed.txt on a clean clone)
    pq.set_defaults(sample=None)
    pr = sub.add_parser("report")
    pr.add_argument("results")
    pk = sub.add_parser("killed", help="write tools/mutants/killed.txt from results files")
    pk.add_argument("results", nargs="+")
    a = ap.parse_args()

    eq = load_equivalents()
    if a.cmd == "list":
        ms = all_mutants(a.files or None)
        if a.count:
            c = {}
            for m in ms:
                c.setdefault(m.file, {}).setdefault(m.op, 0)
                c[m.file][m.op] += 1
            for f in sorted(c):
                print(f, sum(c[f].values()), " ".join(f"{k}={v}" for k, v in sorted(c[f].items())))
            print("all", len(ms))
            return 0
        for m in ms:
            print(f"{m.id}\t{m.key}\t{m.orig!r} -> {m.new!r}")
        return 0
    if a.cmd == "show":
        ms = find(all_mutants(), a.ids)
        for m in ms:
            src = open(os.path.join(TOP, CORE, m.file)).read()
            old = src.split("\n")
            new = apply(src, m).split("\n")
            print(f"{m.id} ({m.key}){'  [equivalent: ' + eq[m.key] + ']' if m.key in eq else ''}")
            lo = m.line - 1
            nlines = src[m.start:m.end].count("\n") + 1
            for l in old[lo:lo + nlines]:
                print(f"-{l}")
            for l in new[lo:lo + nlines - src[m.start:m.end].count("\n") + m.new.count("\n")]:
                print(f"+{l}")
        return 0
    if a.cmd == "killed":
        # The last result of each mutant counts (a re-run after new tests).
        last = {}
        for path in a.results:
            for l in open(path):
                r = json.loads(l)
                last[r["key"]] = r
        keys = set(load_killed()) | {k for k, r in last.items() if r["status"] == "killed"}
        keys -= {k for k, r in last.items() if r["status"] != "killed"}
        current = {m.key for m in all_mutants()}
        keys &= current  # keys of lines that changed are gone
        with open(KILLED, "w") as f:
            f.write("# Mutants of src/core a campaign saw killed, by key (tools/mutants/mutants.py\n"
                    "# killed RESULTS...): what the quick form (ctest mutants.quick) samples when\n"
                    "# a change touches no line of the core. Keys of changed lines drop out.\n")
            for k in sorted(keys):
                f.write(k + "\n")
        print(f"mutants: {len(keys)} keys in {KILLED}")
        return 0
    if a.cmd == "report":
        rs = {}
        for l in open(a.results):
            r = json.loads(l)
            if r["status"] == "survived" and r["key"] in eq:
                r["status"] = "equivalent"
            rs[r["id"]] = r
        report(list(rs.values()), eq)
        return 0

    files = a.files or None
    note = ""
    pool_filter = None
    if a.cmd == "quick" and not files:
        # The mutants of the lines the change added or altered: new code
        # is judged whole. Without such lines (a clean clone of main), the
        # mutants a campaign saw killed (killed.txt), so that a test that
        # lost its power is noticed: until a campaign covers the whole
        # core, the rest of it holds survivors no one has judged.
        changed = changed_core_lines(a.base)
        if changed:
            files = sorted(changed)
            pool_filter = lambda m: m.line in changed.get(m.file, ())
            note = (f"the lines changed since the merge base with {a.base}, in "
                    f"{' '.join(files)}")
            if a.sample is None:
                a.sample = 20
        else:
            killed = load_killed()
            pool_filter = lambda m: m.key in killed
            note = (f"no core line changed against {a.base}: a sample of the {len(killed)} "
                    "mutants a campaign saw killed (tools/mutants/killed.txt)")
            # A tripwire for a test that lost its power, in CI's time budget
            # (each compiled mutant costs about 30 s of the run's 2 cores).
            if a.sample is None:
                a.sample = 10
    ms = all_mutants(files)
    if pool_filter:
        ms = [m for m in ms if pool_filter(m)]
    if a.op:
        ms = [m for m in ms if m.op in a.op]
    if a.id:
        ms = find(ms, a.id)
    if a.skip_done and a.results and os.path.exists(a.results):
        done = {json.loads(l)["id"] for l in open(a.results)}
        ms = [m for m in ms if m.id not in done]
    if a.sample and len(ms) > a.sample:
        seed = a.seed
        if seed is None:
            seed = os.environ.get("RTRS_MUTANTS_SEED") or sh(["git", "-C", TOP, "rev-parse", "HEAD"]).stdout.strip()
        # Known equivalents are left out of a sample: they would only cost time.
        pool = [m for m in ms if m.key not in eq]
        ms = stratified(pool, a.sample, random.Random(str(seed)))
        note += f"{'; ' if note else ''}sample of {len(ms)} (seed {seed})"
    if note:
        print("mutants:", note, flush=True)
    if not ms:
        print("mutants: nothing to mutate")
        return 0
    results, elapsed = run_mutants(ms, a.work, a.jobs, a.nice, a.results, eq)
    print()
    report(results, eq, elapsed)
    if a.report:
        with open(a.report, "w") as f:
            report(results, eq, elapsed, file=f)
    surv = [r for r in results if r["status"] == "survived"]
    if a.cmd == "quick":
        if surv:
            print(f"\nmutants: FAILED: {len(surv)} mutant(s) survived the unit tests; each is a change "
                  "of the core no test noticed: add a test that fails on it, or, if it cannot change "
                  "behaviour, list its key with the reason in tools/mutants/equivalent.txt. Re-run one: "
                  f"tools/mutants/mutants.py run --id {surv[0]['id']}")
            return 1
        built = [r for r in results if r["status"] != "stillborn"]
        print(f"\nmutants: passed: {len(built)} of {len(results)} sampled mutants built, every one killed "
              f"({elapsed:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
