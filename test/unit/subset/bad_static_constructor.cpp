// expect: forbidden sections
int next_id();
struct Registry { int id; Registry() : id(next_id()) {} };
Registry registry;
int registry_id() { return registry.id; }
