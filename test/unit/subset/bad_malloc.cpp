// expect: poisoned
extern "C" void* malloc(unsigned long);
