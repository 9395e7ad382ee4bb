// expect: No such file or directory
#include <vector>
