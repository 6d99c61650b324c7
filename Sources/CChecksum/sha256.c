#include "sha256.h"
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

/// Compresses `blocks` 64-byte blocks into `state` (a, b, …, h) with the SHA extensions.
__attribute__((target("sha,sse4.1,ssse3")))
static void compress(uint32_t state[8], const uint8_t *data, size_t blocks) {
    const __m128i byteSwap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    // The extensions keep the state as (a, b, e, f) and (c, d, g, h).
    __m128i dcba = _mm_loadu_si128((const __m128i *)&state[0]);
    __m128i hgfe = _mm_loadu_si128((const __m128i *)&state[4]);
    __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
    __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
    __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
    __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
    while (blocks--) {
        const __m128i abefBefore = abef, cdghBefore = cdgh;
        __m128i w[16];
        for (int i = 0; i < 16; i++) {
            if (i < 4) {
                w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16 * i)), byteSwap);
            } else {
                // w[t] = σ1(w[t-2]) + w[t-7] + σ0(w[t-15]) + w[t-16], four words at a time.
                __m128i x = _mm_sha256msg1_epu32(w[i - 4], w[i - 3]);
                x = _mm_add_epi32(x, _mm_alignr_epi8(w[i - 1], w[i - 2], 4));
                w[i] = _mm_sha256msg2_epu32(x, w[i - 1]);
            }
            __m128i message = _mm_add_epi32(w[i], _mm_loadu_si128((const __m128i *)&K[4 * i]));
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, message);
            abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(message, 0x0E));
        }
        abef = _mm_add_epi32(abef, abefBefore);
        cdgh = _mm_add_epi32(cdgh, cdghBefore);
        data += 64;
    }
    __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
    _mm_storeu_si128((__m128i *)&state[0], _mm_blend_epi16(feba, dchg, 0xF0));
    _mm_storeu_si128((__m128i *)&state[4], _mm_alignr_epi8(dchg, feba, 8));
}
#endif

int ledger_sha256_is_hardware(void) {
#if defined(__x86_64__)
    static int hardware = -1;
    if (hardware < 0) {
        __builtin_cpu_init();
        hardware = __builtin_cpu_supports("sha") && __builtin_cpu_supports("sse4.1") && __builtin_cpu_supports("ssse3");
    }
    return hardware;
#else
    return 0;
#endif
}

int ledger_sha256(const void *bytes, size_t count, uint8_t out[32]) {
#if defined(__x86_64__)
    if (!ledger_sha256_is_hardware()) return 0;
    uint32_t state[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    const uint8_t *p = bytes;
    size_t whole = count / 64;
    if (whole) compress(state, p, whole);
    // The rest, the 0x80 byte, zeros and the length in bits (big-endian) in one or two blocks.
    uint8_t tail[128] = {0};
    size_t rest = count % 64;
    if (rest) memcpy(tail, p + whole * 64, rest);
    tail[rest] = 0x80;
    size_t tailBlocks = rest < 56 ? 1 : 2;
    uint64_t bits = (uint64_t)count * 8;
    for (int i = 0; i < 8; i++) tail[tailBlocks * 64 - 1 - i] = (uint8_t)(bits >> (8 * i));
    compress(state, tail, tailBlocks);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(state[i] >> 24);
        out[4 * i + 1] = (uint8_t)(state[i] >> 16);
        out[4 * i + 2] = (uint8_t)(state[i] >> 8);
        out[4 * i + 3] = (uint8_t)state[i];
    }
    return 1;
#else
    (void)bytes;
    (void)count;
    (void)out;
    return 0;
#endif
}
