// expect: use of deleted function .*operator new
struct A { int x; };
A* make() { return new A; }
