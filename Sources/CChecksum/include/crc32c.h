#ifndef LEDGER_CRC32C_H
#define LEDGER_CRC32C_H
#include <stddef.h>
#include <stdint.h>

/// CRC-32C (Castagnoli) of `count` bytes, continuing from `crc` (start with 0): with the CPU's
/// CRC32 instruction where present (SSE 4.2 on x86-64), else a portable table.
uint32_t ledger_crc32c(uint32_t crc, const void *bytes, size_t count);

/// The portable implementation alone (for tests that compare the two paths).
uint32_t ledger_crc32c_portable(uint32_t crc, const void *bytes, size_t count);

/// Whether `ledger_crc32c` uses the CPU instruction on this machine.
int ledger_crc32c_is_hardware(void);
#endif
