// Latency histograms of `--record histogram` (docs/raw-format.md): HdrHistogram's buckets at 3 significant
// digits (unit 1 ns, 2,048 sub-buckets), each named by its lowest equivalent value. The samples are kept in
// memory during the run and bucketed once at the end, so the timed loop records exactly as in samples mode.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace harness {

/// The lowest value of v's bucket: v itself below 2,048, else v with its lowest ⌊log₂ v⌋ − 10 bits cleared
/// (2,049 -> 2,048, 1,000,999 -> 1,000,960). Negative values count as 0.
std::int64_t histogram_bucket(std::int64_t v);

/// Every bucket that holds a value: (lowest value, count), by increasing value.
std::vector<std::pair<std::int64_t, std::uint64_t>> histogram_counts(std::vector<std::int64_t> values);

}  // namespace harness
