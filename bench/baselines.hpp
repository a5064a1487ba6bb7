#pragma once
#include <cstddef>
#include <cstdint>

namespace posenc::bench {

void stream_copy(const float* in, float* out, std::size_t n);
void stream_copy_nontemporal(const float* in, float* out, std::size_t n);
void stream_scale_in_place(float* x, std::size_t n, float s);
void stream_copy_nontemporal_prefetched(const float* in, float* out, std::size_t n, std::size_t ahead_bytes);
void stream_scale_in_place_prefetched(float* x, std::size_t n, float s, std::size_t ahead_bytes);
void stream_copy_nontemporal_streams(const float* in, float* out, std::size_t n, std::size_t streams);
void stream_scale_in_place_streams(float* x, std::size_t n, float s, std::size_t streams);
// Reads of bytes (a KV cache's), as 32-bit integer sums so that the compiler keeps the loop and no
// float assist slows it whatever the bytes hold; bytes a multiple of 64. Plain, with each line
// asked for ahead_bytes early into L2, and in `streams` parts at once.
std::uint32_t stream_read(const std::uint8_t* p, std::size_t bytes);
std::uint32_t stream_read_prefetched(const std::uint8_t* p, std::size_t bytes, std::size_t ahead_bytes);
std::uint32_t stream_read_streams(const std::uint8_t* p, std::size_t bytes, std::size_t streams);
void naive_rope(const float* x, float* y, const std::int64_t* positions, std::int64_t tokens, std::int64_t heads,
                std::int64_t dim, float base);
void table_rope(const float* x, float* y, const float* cos_table, const float* sin_table, std::int64_t tokens,
                std::int64_t heads, std::int64_t dim);
void table_rope_nontemporal(const float* x, float* y, const float* cos_table, const float* sin_table,
                            std::int64_t tokens, std::int64_t heads, std::int64_t dim);

}  // namespace posenc::bench
