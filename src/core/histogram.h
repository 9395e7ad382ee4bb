// SPDX-License-Identifier: GPL-2.0
// A latency histogram with log2 buckets of microseconds, cheap enough for
// the I/O path: each connection has its own (core/connection.h), recorded
// under that connection's lock, one writer at a time: a relaxed atomic add
// to a bucket and to the sum (one instruction each, on the connection's
// own line), the max a load and, when it grows, a store. Readers (the debugfs file) take no lock: they add up the
// connections' histograms (merge()), each counter exact, together as of
// about the same moment; the count is the buckets' total, so that a reader
// never sees a count that its buckets do not add up to.
//
// Bucket i holds latencies in [2^i, 2^(i+1)) microseconds; bucket 0 also
// holds those below 1 us, the last one everything from 2^31 us (35 min) on.
#pragma once

#include "rt/strbuf.h"
#include "rt/types.h"

namespace core {

// Building with RTRS_NO_LATENCY (make RTRS_NO_LATENCY=1) leaves the clock
// readings and the recording out of the I/O path: only to measure what they
// cost (README "Observe"); the files then show zeros.
#ifdef RTRS_NO_LATENCY
inline constexpr bool kLatencyOn = false;
#else
inline constexpr bool kLatencyOn = true;
#endif

class Histogram {
public:
    static constexpr rt::u32 kBuckets = 32;

    // The bucket of a latency of us microseconds.
    static constexpr rt::u32 bucket_of(rt::u64 us) {
        if (us < 2) return 0;
        rt::u32 b = 63 - static_cast<rt::u32>(__builtin_clzll(us));
        return b < kBuckets ? b : kBuckets - 1;
    }

    // A request took ns nanoseconds (from two readings of the monotonic
    // clock: a reading that went backwards counts as 0).
    void record_span(rt::u64 start_ns, rt::u64 end_ns) {
        record_us(end_ns > start_ns ? (end_ns - start_ns) / 1000 : 0);
    }
    // One writer at a time (the caller's lock); readers may run meanwhile.
    void record_us(rt::u64 us) {
        __atomic_add_fetch(&buckets_[bucket_of(us)], 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&sum_us_, us, __ATOMIC_RELAXED);
        if (us > __atomic_load_n(&max_us_, __ATOMIC_RELAXED)) __atomic_store_n(&max_us_, us, __ATOMIC_RELAXED);
    }

    // Adds o's counters to this one's (a reader's own copy: no other
    // writer).
    void merge(const Histogram& o) {
        for (rt::u32 i = 0; i < kBuckets; ++i) buckets_[i] += __atomic_load_n(&o.buckets_[i], __ATOMIC_RELAXED);
        sum_us_ += __atomic_load_n(&o.sum_us_, __ATOMIC_RELAXED);
        const rt::u64 m = __atomic_load_n(&o.max_us_, __ATOMIC_RELAXED);
        if (m > max_us_) max_us_ = m;
    }

    void reset() {
        for (rt::u64& b : buckets_) __atomic_store_n(&b, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&sum_us_, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&max_us_, 0, __ATOMIC_RELAXED);
    }

    // One line of the debugfs file (see README "Observe"):
    //   <name> <count> <sum_us> <max_us> <b0> .. <b31>\n
    void format(rt::StrBuf& out, const char* name) const {
        rt::u64 b[kBuckets];
        rt::u64 count = 0;
        for (rt::u32 i = 0; i < kBuckets; ++i) {
            b[i] = __atomic_load_n(&buckets_[i], __ATOMIC_RELAXED);
            count += b[i];
        }
        out.put(name).put(' ').dec(count).put(' ')
            .dec(__atomic_load_n(&sum_us_, __ATOMIC_RELAXED)).put(' ')
            .dec(__atomic_load_n(&max_us_, __ATOMIC_RELAXED));
        for (rt::u64 v : b) out.put(' ').dec(v);
        out.put('\n');
    }

    rt::u64 count() const {
        rt::u64 n = 0;
        for (const rt::u64& b : buckets_) n += __atomic_load_n(&b, __ATOMIC_RELAXED);
        return n;
    }
    rt::u64 bucket(rt::u32 i) const { return __atomic_load_n(&buckets_[i], __ATOMIC_RELAXED); }
    rt::u64 sum_us() const { return __atomic_load_n(&sum_us_, __ATOMIC_RELAXED); }
    rt::u64 max_us() const { return __atomic_load_n(&max_us_, __ATOMIC_RELAXED); }

private:
    rt::u64 buckets_[kBuckets] = {};
    rt::u64 sum_us_ = 0;
    rt::u64 max_us_ = 0;
};

}  // namespace core
