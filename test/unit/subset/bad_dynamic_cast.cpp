// expect: poisoned|-fno-rtti
struct B { virtual ~B(); };
struct D : B {};
D* down(B* b) { return dynamic_cast<D*>(b); }
