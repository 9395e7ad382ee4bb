#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Prints every KUnit case the sources define, one "<suite> <case>" a line.

Usage: list-cases.py [SOURCE.c ...]   (default: test/kunit/*_kunit.c)

The list guest-run.sh and parse-ktap.sh check the module's results against,
made from the sources so that it cannot drift from them. It reads, with the
comments removed, each "struct kunit_case NAME[] = { ... };" (its
KUNIT_CASE(fn) entries), each "struct kunit_suite S = { .name = "...",
.test_cases = NAME, ... };" and each kunit_test_suites(&S, ...). It fails
(exit 1, a line on stderr) rather than print a partial list: a case macro it
does not know (KUNIT_CASE_PARAM, KUNIT_CASE_SLOW, ...), a case array no
registered suite uses, a registered suite it cannot find, a suite without
cases, a name twice, or no suite at all.
"""
import glob
import os
import re
import sys


def strip_comments(text):
    # Strings stay (a suite's .name is one); comments become a space.
    out = re.sub(r'/\*.*?\*/|//[^\n]*|("(?:\\.|[^"\\])*")',
                 lambda m: m.group(1) if m.group(1) else ' ', text, flags=re.S)
    return out


def fail(msg):
    print('list-cases: ' + msg, file=sys.stderr)
    sys.exit(1)


def cases_of(sources):
    arrays = {}     # array name -> [case, ...]
    suites = {}     # suite variable -> (name, array name)
    registered = []
    for path in sources:
        with open(path, encoding='utf-8') as f:
            text = strip_comments(f.read())
        where = os.path.basename(path)
        for m in re.finditer(r'struct\s+kunit_case\s+(\w+)\s*\[\s*\]\s*=\s*\{(.*?)\}\s*;', text, re.S):
            body = m.group(2)
            names = []
            for e in re.finditer(r'(\w+)\s*\(\s*(\w+)\s*\)', body):
                if e.group(1) != 'KUNIT_CASE':
                    fail('%s: %s in %s[]: only KUNIT_CASE(fn) is understood'
                         % (where, e.group(1), m.group(1)))
                names.append(e.group(2))
            rest = re.sub(r'\w+\s*\(\s*\w+\s*\)|[\s,]|\{\s*\}', '', body)
            if rest:
                fail('%s: %s[] has entries other than KUNIT_CASE(fn): %r' % (where, m.group(1), rest))
            if m.group(1) in arrays:
                fail('%s: case array %s defined twice' % (where, m.group(1)))
            arrays[m.group(1)] = names
        for m in re.finditer(r'struct\s+kunit_suite\s+(\w+)\s*=\s*\{(.*?)\}\s*;', text, re.S):
            body = m.group(2)
            name = re.search(r'\.name\s*=\s*"([^"]+)"', body)
            arr = re.search(r'\.test_cases\s*=\s*(\w+)', body)
            if not name or not arr:
                fail('%s: suite %s lacks .name or .test_cases' % (where, m.group(1)))
            suites[m.group(1)] = (name.group(1), arr.group(1))
        for m in re.finditer(r'kunit_test_suites?\s*\(([^)]*)\)', text):
            for v in m.group(1).split(','):
                v = v.strip().lstrip('&').strip()
                if v:
                    registered.append(v)
    if not registered:
        fail('no kunit_test_suites() in ' + ' '.join(sources))
    used = set()
    lines = []
    seen_suites = set()
    for v in registered:
        if v not in suites:
            fail('registered suite %s is not defined' % v)
        name, arr = suites[v]
        if arr not in arrays:
            fail('suite %s: case array %s is not defined' % (name, arr))
        if not arrays[arr]:
            fail('suite %s has no cases' % name)
        if name in seen_suites:
            fail('suite name %s twice' % name)
        seen_suites.add(name)
        used.add(arr)
        if len(set(arrays[arr])) != len(arrays[arr]):
            fail('suite %s lists a case twice' % name)
        lines += ['%s %s' % (name, c) for c in arrays[arr]]
    for arr in arrays:
        if arr not in used:
            fail('case array %s is used by no registered suite' % arr)
    return lines


def main():
    sources = sys.argv[1:]
    if not sources:
        here = os.path.dirname(os.path.abspath(__file__))
        sources = sorted(glob.glob(os.path.join(here, '*_kunit.c')))
        if not sources:
            fail('no *_kunit.c next to ' + __file__)
    print('# Made by test/kunit/list-cases.py from ' +
          ' '.join(os.path.basename(s) for s in sources) + ': "<suite> <case>"')
    for line in cases_of(sources):
        print(line)


if __name__ == '__main__':
    main()
