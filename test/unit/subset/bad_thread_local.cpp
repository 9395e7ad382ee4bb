// expect: poisoned
thread_local int per_thread;
