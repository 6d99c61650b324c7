#ifndef LEDGER_SHA256_H
#define LEDGER_SHA256_H
#include <stddef.h>
#include <stdint.h>

/// SHA-256 of `count` bytes into `out` with the CPU's SHA extensions: returns 1, or 0 (and
/// writes nothing) where the CPU lacks them, for the caller to use another implementation.
int ledger_sha256(const void *bytes, size_t count, uint8_t out[32]);

/// `ledger_sha256` of two messages, `a` into `outA` and `b` into `outB`, with their rounds
/// interleaved when they are as many blocks long (as a ledger's entry forms mostly are): twice
/// the speed of two calls, nearly. Returns 1, or 0 (writing nothing) as `ledger_sha256` does.
int ledger_sha256_pair(const void *a, size_t countA, const void *b, size_t countB, uint8_t outA[32], uint8_t outB[32]);

/// Whether `ledger_sha256` uses the CPU's SHA extensions on this machine.
int ledger_sha256_is_hardware(void);
#endif
