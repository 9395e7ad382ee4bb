// expect: needs the C\+\+ runtime library: __cxa_guard
int compute();
int cached() { static int value = compute(); return value; }
