// expect: poisoned
int half(int x) { float f = x; return static_cast<int>(f / 2); }
