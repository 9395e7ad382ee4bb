// expect: poisoned|-fno-rtti
struct B { virtual ~B(); };
bool same(B& a, B& b) { return typeid(a) == typeid(b); }
