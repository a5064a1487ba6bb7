#pragma once
// The worked examples of ../shared/seeds, as the documents print them. The CLI shows them and the
// tests check the reference against them.
#include <array>
#include <cstdint>
#include <tuple>

namespace posenc::seeds {

// seed 000: PE(a).PE(b) for d = 512 (the document prints 249,1 / 189,6 / 137,0 / 256; the
// finer figures 249.1021..., 189.5967..., 137.027... are the reference's, to the digits shown).
inline constexpr std::array<std::tuple<std::int64_t, std::int64_t, const char*>, 7> kSinusoidalDots{{
    {10, 11, "249.1021..."},
    {100, 101, "249.1021..."},
    {10, 15, "189.5967..."},
    {100, 105, "189.5967..."},
    {10, 50, "137.027..."},
    {100, 140, "137.027..."},
    {7, 7, "256 (maximum, same position)"},
}};

// seed 003: numpy default_rng(0).normal(size=8), drawn twice, as exact doubles.
inline constexpr std::array<double, 8> kQ{
    0x1.017ed89db8441p-3,  -0x1.0e8cfe9bd45ccp-3, 0x1.47e57a468b06dp-1, 0x1.adabbec84d4f0p-4,
    -0x1.1243418e643edp-1, 0x1.7245f95ced1e6p-2,  0x1.4dd2f26bd103cp+0, 0x1.e4e7cbc69bca3p-1};
inline constexpr std::array<double, 8> kK{
    -0x1.684ffc1daaf28p-1, -0x1.43f2a959cc8bbp+0, -0x1.3f1dd4920f4fbp-1, 0x1.528adc38b0ce3p-5,
    -0x1.299a9bc1a2383p+1, -0x1.c015d809d257ep-3, -0x1.3ef405142e27ep+0, -0x1.76ebbf28c26f7p-1};

// q at m, k at n, and q.k as the document prints it (6 decimals).
inline constexpr std::array<std::tuple<std::int64_t, std::int64_t, const char*>, 9> kRopeDots{{
    {3, 1, "-1.763129"},
    {10, 8, "-1.763129"},
    {100, 98, "-1.763129"},
    {5000, 4998, "-1.763129"},
    {100, 100, "-1.467987"},
    {101, 100, "-1.695379"},
    {102, 100, "-1.763129"},
    {105, 100, "-1.142699"},
    {120, 100, "-0.930017"},
}};

}  // namespace posenc::seeds
