// expect: poisoned
double third(int x) { return x / 3.0; }
