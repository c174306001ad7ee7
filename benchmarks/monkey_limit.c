/* The machine's limit for the monkey: how fast a plain C loop types exactly uniform random keys
 * and scans them for records against the start of a text, on one core.
 *
 * benchmarks/monkey.py compiles this with the system compiler (cc -O2 -march=native) and times
 * it in the same run as the Python engine, so the engine's speed is given as a share of it.
 *
 *   cc -O2 -march=native -o monkey_limit monkey_limit.c
 *   ./monkey_limit KEYS KEYSTROKES SEED TARGET_CODES   # e.g. 27 300000000 1 19,7,4,26,...
 *
 * The loop, written for speed rather than to match the engine's stream:
 *   - wyrand, a fast 64-bit generator (one 64x64->128 multiply per 64 bits);
 *   - the engine's exact-uniform mapping: each 16 bits below the largest multiple of k*k give two
 *     keys through a 65,536-entry table; the rare value above it is replaced by fresh bits;
 *   - a prefix scan over each block: the first four target keys compared 32 positions at a time
 *     (GCC vector extensions: AVX2 with -march=native on x86, NEON on ARM), the rare candidates
 *     then checked key by key; a record grows by one letter at most per keystroke, and the last
 *     record-length keys of a block are carried into the next.
 * It prints: keystrokes, CPU seconds, keys per CPU second, records found, a checksum of the keys.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BLOCK (1 << 16)
#define CARRY 256
#define LANES 32
#define REDRAW 0xFFFFu

typedef uint8_t bytes32 __attribute__((vector_size(LANES)));

static uint64_t wy_state;

static inline uint64_t wyrand(void) {
    wy_state += 0xa0761d6478bd642full;
    __uint128_t product = (__uint128_t)wy_state * (wy_state ^ 0xe7037ed1a0b428dbull);
    return (uint64_t)(product >> 64) ^ (uint64_t)product;
}

static uint16_t table[1 << 16];

static void build_table(unsigned keys) {
    unsigned span = keys * keys, fair = 65536u - 65536u % span;
    for (unsigned v = 0; v < 65536u; v++) {
        unsigned pair = v % span;
        /* little-endian: the first key of the pair is the low byte */
        table[v] = v < fair ? (uint16_t)(pair / keys + (pair % keys) * 256u) : (uint16_t)REDRAW;
    }
}

static inline uint16_t fair_pair(void) {
    for (;;) {
        uint64_t word = wyrand();
        for (int j = 0; j < 4; j++) {
            uint16_t pair = table[(uint16_t)(word >> (16 * j))];
            if (pair != REDRAW) return pair;
        }
    }
}

/* Fill `out` with `count` keys (count a multiple of 8). */
static void type_keys(uint8_t *out, size_t count) {
    for (size_t i = 0; i < count; i += 8) {
        uint64_t word = wyrand();
        uint16_t p0 = table[(uint16_t)word], p1 = table[(uint16_t)(word >> 16)];
        uint16_t p2 = table[(uint16_t)(word >> 32)], p3 = table[(uint16_t)(word >> 48)];
        if (__builtin_expect((p0 == REDRAW) | (p1 == REDRAW) | (p2 == REDRAW) | (p3 == REDRAW), 0)) {
            if (p0 == REDRAW) p0 = fair_pair();
            if (p1 == REDRAW) p1 = fair_pair();
            if (p2 == REDRAW) p2 = fair_pair();
            if (p3 == REDRAW) p3 = fair_pair();
        }
        memcpy(out + i, &p0, 2);
        memcpy(out + i + 2, &p1, 2);
        memcpy(out + i + 4, &p2, 2);
        memcpy(out + i + 6, &p3, 2);
    }
}

static inline bytes32 load32(const uint8_t *at) {
    bytes32 v;
    memcpy(&v, at, sizeof v);
    return v;
}

static inline int any32(bytes32 v) {
    uint64_t parts[LANES / 8];
    memcpy(parts, &v, sizeof parts);
    uint64_t all = 0;
    for (int j = 0; j < LANES / 8; j++) all |= parts[j];
    return all != 0;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s KEYS KEYSTROKES SEED TARGET_CODES(comma-separated)\n", argv[0]);
        return 64;
    }
    unsigned keys = (unsigned)strtoul(argv[1], NULL, 10);
    uint64_t keystrokes = strtoull(argv[2], NULL, 10) / BLOCK * BLOCK;
    wy_state = strtoull(argv[3], NULL, 10);
    uint8_t target[CARRY];
    size_t target_length = 0;
    for (char *item = strtok(argv[4], ","); item && target_length < CARRY - 1; item = strtok(NULL, ","))
        target[target_length++] = (uint8_t)strtoul(item, NULL, 10);
    if (keys < 2 || keys > 255 || target_length < 4) {
        fprintf(stderr, "2-255 keys and a target of at least 4 keys\n");
        return 64;
    }
    build_table(keys);
    /* carry | block | slack for the vector loads past the end */
    uint8_t *buffer = calloc(CARRY + BLOCK + LANES + 8, 1);
    uint8_t *block = buffer + CARRY;
    size_t record = 0, carried = 0, records = 0;
    uint64_t checksum = 0;
    bytes32 t0 = {0}, t1 = {0}, t2 = {0}, t3 = {0};
    for (int j = 0; j < LANES; j++) t0[j] = target[0], t1[j] = target[1], t2[j] = target[2], t3[j] = target[3];

    clock_t started = clock();
    for (uint64_t typed = 0; typed < keystrokes; typed += BLOCK) {
        type_keys(block, BLOCK);
        checksum += block[0] + ((uint64_t)block[BLOCK - 1] << 8);
        const uint8_t *scan = block - carried;
        size_t length = carried + BLOCK;
        /* starts s with scan[s..s+3] == target[0..3], 32 at a time */
        for (size_t s = 0; s + 3 < length; s += LANES) {
            bytes32 hit = (load32(scan + s) == t0) & (load32(scan + s + 1) == t1) & (load32(scan + s + 2) == t2) &
                          (load32(scan + s + 3) == t3);
            if (__builtin_expect(!any32(hit), 1)) continue;
            for (size_t j = s; j < s + LANES && j + 3 < length; j++) {
                /* extend while the typing matches the target and a record is beaten */
                size_t matched = 0;
                while (j + matched < length && matched < target_length && scan[j + matched] == target[matched])
                    matched++;
                if (matched > record) {
                    record = matched;
                    records++;
                }
            }
        }
        carried = record < CARRY ? record : CARRY - 1;
        memmove(block - carried, block + BLOCK - carried, carried);
    }
    double seconds = (double)(clock() - started) / CLOCKS_PER_SEC;
    printf("%llu %.6f %.0f %zu %llu\n", (unsigned long long)keystrokes, seconds, keystrokes / seconds, records,
           (unsigned long long)checksum);
    free(buffer);
    return 0;
}
