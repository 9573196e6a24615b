// HdrHistogram's buckets at 3 significant digits (histogram.hpp).
#include "histogram.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace {

constexpr std::int64_t kSubBuckets = 2048;  // 3 significant digits: 2 * 10^3 rounded up to a power of two

int floor_log2(std::uint64_t v) { return 63 - __builtin_clzll(v); }

}  // namespace

std::int64_t harness::histogram_bucket(std::int64_t v) {
    if (v < kSubBuckets) return v < 0 ? 0 : v;
    const int shift = floor_log2(static_cast<std::uint64_t>(v)) - 10;
    return (v >> shift) << shift;
}

std::vector<std::pair<std::int64_t, std::uint64_t>> harness::histogram_counts(std::vector<std::int64_t> values) {
    for (auto& v : values) v = histogram_bucket(v);
    std::sort(values.begin(), values.end());
    std::vector<std::pair<std::int64_t, std::uint64_t>> counts;
    for (const std::int64_t v : values) {
        if (!counts.empty() && counts.back().first == v)
            ++counts.back().second;
        else
            counts.emplace_back(v, 1);
    }
    return counts;
}
