// expect: poisoned|exception handling disabled
void fail(int x) { if (x) throw x; }
