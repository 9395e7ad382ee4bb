// expect-ok: the allowed subset compiles and needs no C++ runtime.
#include "rt/alloc.h"
#include "rt/list.h"
#include "rt/refcount.h"
#include "rt/result.h"
#include "rt/strbuf.h"

struct Node : rt::ListLink<> {
    int v = 0;
};

constinit int counter = 0;

rt::Result<int> make_and_count(rt::Gfp gfp) {
    auto n = RT_TRY(rt::make_own<Node>(gfp));
    rt::List<Node> l;
    l.push_back(*n);
    int size = static_cast<int>(l.size());
    l.remove(*n);
    return size + counter;
}
