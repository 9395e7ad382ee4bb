// expect: forbidden sections|needs the C\+\+ runtime
void release();
struct Guard { ~Guard() { release(); } };
Guard guard;
