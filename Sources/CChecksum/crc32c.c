#include "crc32c.h"
#include <string.h>

static uint32_t table[256];
static int table_ready;

static void make_table(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = (c & 1) ? 0x82F63B78u ^ (c >> 1) : c >> 1;
        table[n] = c;
    }
    table_ready = 1;
}

uint32_t ledger_crc32c_portable(uint32_t crc, const void *bytes, size_t count) {
    if (!table_ready) make_table();
    const uint8_t *p = bytes;
    crc = ~crc;
    while (count--) crc = table[(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t crc32c_sse42(uint32_t crc, const void *bytes, size_t count) {
    const uint8_t *p = bytes;
    uint64_t c = ~crc;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __builtin_ia32_crc32di(c, word);
        p += 8;
        count -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (count--) c32 = __builtin_ia32_crc32qi(c32, *p++);
    return ~c32;
}
#endif

int ledger_crc32c_is_hardware(void) {
#if defined(__x86_64__)
    return __builtin_cpu_supports("sse4.2");
#else
    return 0;
#endif
}

uint32_t ledger_crc32c(uint32_t crc, const void *bytes, size_t count) {
#if defined(__x86_64__)
    static int hardware = -1;
    if (hardware < 0) hardware = ledger_crc32c_is_hardware();
    if (hardware) return crc32c_sse42(crc, bytes, count);
#endif
    return ledger_crc32c_portable(crc, bytes, count);
}
