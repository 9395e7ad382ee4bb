// SPDX-License-Identifier: GPL-2.0
// An RDMA device in use: its protection domain, shared by every path on it
// and released with the last one. The module keeps them (Module::devices);
// when the device goes away, its paths are closed and the removal waits
// for the release.
#pragma once

#include "core/env.h"
#include "core/lock.h"
#include "core/module.h"
#include "rt/list.h"
#include "rt/refcount.h"

namespace core {

class Path;
struct DevicePathsTag;

class Device : public rt::ListLink<> {
public:
    Device(void* ib_dev, rtrs_env_dev* env, const rtrs_env_dev_attrs& attrs)
        : ib_dev_(ib_dev), env_(env), attrs_(attrs) {}
    ~Device();

    void add_ref() { refs_.get(); }
    // The last reference unlinks it from the module, closes it and wakes
    // a removal waiting for it.
    void release_ref();
    [[nodiscard]] bool get_unless_zero() { return refs_.get_unless_zero(); }

    void* ib_dev() const { return ib_dev_; }
    rtrs_env_dev* env() const { return env_; }
    const rtrs_env_dev_attrs& attrs() const { return attrs_; }

    // Under the module lock:
    bool removing GUARDED_BY(module()->lock()) = false;
    rtrs_env_waiter* removal GUARDED_BY(module()->lock()) = nullptr;
    rt::List<Path, DevicePathsTag> paths GUARDED_BY(module()->lock());

private:
    void* ib_dev_;
    rtrs_env_dev* env_;
    rtrs_env_dev_attrs attrs_;
    rt::RefCount refs_{1};
};

}  // namespace core
