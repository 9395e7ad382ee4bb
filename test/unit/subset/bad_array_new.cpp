// expect: use of deleted function .*operator new \[\]
int* make(int n) { return new int[n]; }
