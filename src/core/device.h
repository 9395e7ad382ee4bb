// SPDX-License-Identifier: GPL-2.0
// An RDMA device, from the IB core's telling us of it (rtrs_core_on_device_add)
// to the module's exit: its protection domain while paths use it (opened
// by the first, closed with the last), the paths on it, and whether it is
// going away. The record outlives the PD and the removal: a connection
// request for a device whose removal began (rdma_cm hands them up until
// its own removal, after ours) finds it marked, and is refused instead of
// opening a PD on a device being unregistered. A new device at the same
// address (the IB core's add) replaces it.
#pragma once

#include "core/env.h"
#include "core/lock.h"
#include "core/module.h"
#include "rt/list.h"

namespace core {

class Path;
struct DevicePathsTag;

class Device : public rt::ListLink<> {
public:
    explicit Device(void* ib_dev) : ib_dev_(ib_dev) {}
    ~Device();

    // A path's hold on the PD (rt::RefPtr<Device>): Module::device_for()
    // takes it; the last release closes the PD and wakes a removal that
    // waits for it.
    void add_ref();
    void release_ref();

    void* ib_dev() const { return ib_dev_; }
    // The PD and what the device said of itself: set while a path holds it.
    rtrs_env_dev* env() const { return env_; }
    const rtrs_env_dev_attrs& attrs() const { return attrs_; }

    // Under the module lock:
    // Our client was told the device goes away: no new path on it, ever.
    bool removing GUARDED_BY(module()->lock()) = false;
    // Made with the record, so that a removal never allocates; the
    // removal that waits takes it (and frees it).
    rtrs_env_waiter* removal GUARDED_BY(module()->lock()) = nullptr;
    rt::List<Path, DevicePathsTag> paths GUARDED_BY(module()->lock());

private:
    friend class Module;
    void* ib_dev_;
    // Written under the module lock when the users go from 0 to 1 and
    // from 1 to 0; read by the paths that hold it.
    rtrs_env_dev* env_ = nullptr;
    rtrs_env_dev_attrs attrs_{};
    rt::u32 users_ GUARDED_BY(module()->lock()) = 0;
};

}  // namespace core
