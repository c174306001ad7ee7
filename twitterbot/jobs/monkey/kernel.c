/* The monkey's compiled kernel: the same keys as the numpy path in simulation.py, faster.
 *
 * Compiled at first use by kernel.py with the system C compiler and loaded with ctypes. It must
 * reproduce, bit for bit, what `KeyStream._next_draw` and `PrefixMatcher.find` compute with
 * numpy, so that a seed's records and checkpoints are the same whichever path types them:
 *
 * - numpy's PCG64: a 128-bit LCG (state = state * MULT + inc), output XSL-RR of the new state;
 *   `random_raw` takes 64-bit outputs, while `Generator.integers` takes 32-bit halves through
 *   the generator's one-value buffer (has_uint32 / uinteger: low half first, high half kept).
 * - each 64-bit output is four little-endian 16-bit values; a value v below the largest
 *   multiple of k*k is the pair v mod k*k, keys (pair / k, pair mod k); the values at or above
 *   it are replaced afterwards, in order, by pairs from `integers(0, k*k)` (Lemire's method on
 *   32-bit draws, as numpy's random_bounded_uint64_fill does for ranges below 2^32).
 *
 * PCG64 needs 128-bit arithmetic: the compiler's own integers where it has them (GCC and Clang
 * on 64-bit targets), otherwise (32-bit armhf: Raspberry Pi OS's 32-bit images) two 64-bit words
 * with the carries done by hand; -DMONKEY_PORTABLE_U128 picks those anywhere, for the tests.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SIZEOF_INT128__) && !defined(MONKEY_PORTABLE_U128)
typedef unsigned __int128 u128;
static inline u128 u128_make(uint64_t hi, uint64_t lo) { return ((u128)hi << 64) | lo; }
static inline uint64_t u128_hi(u128 a) { return (uint64_t)(a >> 64); }
static inline uint64_t u128_lo(u128 a) { return (uint64_t)a; }
static inline u128 u128_add(u128 a, u128 b) { return a + b; }
static inline u128 u128_sub(u128 a, u128 b) { return a - b; }
static inline u128 u128_mul(u128 a, u128 b) { return a * b; }
#else
typedef struct {
    uint64_t hi, lo;
} u128;
static inline u128 u128_make(uint64_t hi, uint64_t lo) {
    u128 r = {hi, lo};
    return r;
}
static inline uint64_t u128_hi(u128 a) { return a.hi; }
static inline uint64_t u128_lo(u128 a) { return a.lo; }
static inline u128 u128_add(u128 a, u128 b) {
    uint64_t lo = a.lo + b.lo;
    return u128_make(a.hi + b.hi + (lo < a.lo), lo);
}
static inline u128 u128_sub(u128 a, u128 b) { return u128_make(a.hi - b.hi - (a.lo < b.lo), a.lo - b.lo); }
/* The high word of the 128-bit product of two words, from their 32-bit halves. */
static inline uint64_t mul_high(uint64_t a, uint64_t b) {
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t low = a0 * b0, cross1 = a0 * b1, cross2 = a1 * b0;
    uint64_t middle = (low >> 32) + (uint32_t)cross1 + (uint32_t)cross2;
    return a1 * b1 + (cross1 >> 32) + (cross2 >> 32) + (middle >> 32);
}
/* Modulo 2^128, as the 128-bit integers wrap. */
static inline u128 u128_mul(u128 a, u128 b) {
    return u128_make(mul_high(a.lo, b.lo) + a.lo * b.hi + a.hi * b.lo, a.lo * b.lo);
}
#endif

/* On x86-64, an AVX2 copy of the loops beside the baseline one, picked at load time (the same
 * results: integer arithmetic only). Elsewhere, the baseline: NEON on aarch64. */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef CLONES
#define CLONES
#endif

#define PCG_MULT u128_make(0x2360ED051FC65DA4ULL, 0x4385DF649FCCF645ULL)

static inline uint64_t pcg_output(u128 s) {
    uint64_t x = u128_hi(s) ^ u128_lo(s);
    unsigned rot = (unsigned)(u128_hi(s) >> 58);
    return (x >> rot) | (x << ((64u - rot) & 63u));
}

static inline uint64_t pcg_next64(u128 *state, u128 inc) {
    *state = u128_add(u128_mul(*state, PCG_MULT), inc);
    return pcg_output(*state);
}

/* g: state high, state low, increment high, increment low, has_uint32, uinteger (in and out). */
static inline uint32_t pcg_next32(u128 *state, u128 inc, uint64_t *g) {
    if (g[4]) {
        g[4] = 0;
        return (uint32_t)g[5];
    }
    uint64_t next = pcg_next64(state, inc);
    g[4] = 1;
    g[5] = next >> 32;
    return (uint32_t)next;
}

/* numpy's buffered_bounded_lemire_uint32 for rng = span - 1. */
static inline uint32_t lemire(u128 *state, u128 inc, uint64_t *g, uint32_t span) {
    uint64_t m = (uint64_t)pcg_next32(state, inc, g) * span;
    uint32_t leftover = (uint32_t)m;
    if (leftover < span) {
        const uint32_t threshold = (UINT32_MAX - (span - 1)) % span;
        while (leftover < threshold) {
            m = (uint64_t)pcg_next32(state, inc, g) * span;
            leftover = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

/* Division of 16-bit numbers by d (2 to 255) as compilers do it for constants (Granlund and
 * Montgomery, 1994, figure 4.1): m = floor(2^16 (2^l - d) / d) + 1 with l = ceil(log2 d), then
 * t = (n m) >> 16 and n / d = (t + ((n - t) >> 1)) >> (l - 1), exact for every n below 2^16.
 * All in 16-bit lanes, so the compiler vectorises it 8 or 16 values at a time. */
static uint16_t divisor(uint32_t d, unsigned *shift) {
    unsigned l = 0;
    while ((1u << l) < d)
        l++;
    *shift = l - 1;
    return (uint16_t)((((uint32_t)1 << 16) * ((1u << l) - d)) / d + 1);
}

static inline __attribute__((always_inline)) uint16_t divide(uint16_t n, uint16_t m, unsigned shift) {
    uint16_t t = (uint16_t)(((uint32_t)n * m) >> 16);
    return (uint16_t)((uint16_t)(t + (uint16_t)((uint16_t)(n - t) >> 1)) >> (shift & 7));
}

/* The two keys of the 16-bit value v (below the largest multiple of k^2), first in the low
 * byte: the pair is v mod k^2, its keys pair / k and pair mod k, which are (v / k) mod k and
 * v mod k (k^2 being a multiple of k). */
static inline __attribute__((always_inline)) uint16_t pair_keys(uint16_t v, uint16_t k, uint16_t by_k, unsigned shift) {
    uint16_t q = divide(v, by_k, shift);
    uint16_t second = (uint16_t)(v - (uint16_t)(q * k));
    uint16_t first = (uint16_t)(q - (uint16_t)(divide(q, by_k, shift) * k));
    return (uint16_t)(first | (uint16_t)(second << 8));
}

static inline __attribute__((always_inline)) void map_values(const uint16_t *values, uint16_t *keys, uint8_t *unfair,
                                                             size_t count, uint16_t k, uint16_t by_k, unsigned shift,
                                                             uint16_t last_fair) {
    for (size_t i = 0; i < count; i++) {
        uint16_t v = values[i];
        keys[i] = pair_keys(v, k, by_k, shift);
        unfair[i] = (uint8_t)(v > last_fair);
    }
}

/* Fill `out` with 8 * words keys; `redraw` has room for 4 * words indices (scratch).
 * Returns how many values were drawn again. The raw outputs come from four interleaved LCG
 * chains (each stepping four at a time: the same sequence, without one long dependency chain),
 * in chunks, so that the mapping loop runs on whole vectors of 16-bit values. */
#define CHUNK 64
CLONES size_t monkey_draw(uint64_t *g, uint32_t k, uint8_t *out, size_t words, uint32_t *redraw) {
    u128 state = u128_make(g[0], g[1]);
    const u128 inc = u128_make(g[2], g[3]);
    const uint32_t span = k * k;
    const uint16_t last_fair = (uint16_t)(65535u - 65536u % span); /* values above it are redrawn */
    const uint16_t k16 = (uint16_t)k;
    unsigned shift;
    const uint16_t by_k = divisor(k, &shift);
    uint64_t raw[CHUNK];
    /* four 16-bit values in each output, low first (little-endian only), read in place:
     * -fno-strict-aliasing (native.FLAGS) makes reading raw's words as 16-bit values defined */
    const uint16_t *values = (const uint16_t *)(const void *)raw;
    uint8_t unfair[4 * CHUNK];
    size_t redraws = 0;
    /* lane[j] is the state whose output is the (j+1)-th next: state advanced j+1 steps. */
    u128 lane[4], mult4 = u128_make(0, 1), inc4 = u128_make(0, 0);
    for (int j = 0; j < 4; j++) {
        inc4 = u128_add(u128_mul(inc4, PCG_MULT), inc);
        mult4 = u128_mul(mult4, PCG_MULT);
        lane[j] = u128_add(u128_mul(state, mult4), inc4);
    }
    /* One step back: the multiplier's inverse modulo 2^128 (Newton's iteration). */
    u128 pcg_back = PCG_MULT;
    for (int i = 0; i < 7; i++)
        pcg_back = u128_mul(pcg_back, u128_sub(u128_make(0, 2), u128_mul(PCG_MULT, pcg_back)));
    const u128 pcg_back_inc = u128_sub(u128_make(0, 0), u128_mul(inc, pcg_back));
    for (size_t w0 = 0; w0 < words; w0 += CHUNK) {
        size_t n = words - w0 < CHUNK ? words - w0 : CHUNK;
        if (n == CHUNK) { /* four interleaved chains, each 4 steps at a time: the same outputs */
            for (size_t i = 0; i < CHUNK; i += 4)
                for (size_t j = 0; j < 4; j++) {
                    raw[i + j] = pcg_output(lane[j]);
                    lane[j] = u128_add(u128_mul(lane[j], mult4), inc4);
                }
        } else {
            state = u128_add(u128_mul(lane[0], pcg_back), pcg_back_inc); /* the state before lane[0]'s output */
            for (size_t i = 0; i < n; i++)
                raw[i] = pcg_next64(&state, inc);
            for (size_t j = 0; j < 4; j++)
                lane[j] = u128_add(u128_mul(j ? lane[j - 1] : state, PCG_MULT), inc);
        }
        uint16_t *keys = (uint16_t *)(void *)(out + 8 * w0); /* two keys each, first low */
        switch (shift) { /* a constant shift in each copy: 16-bit vector shifts */
        case 0: map_values(values, keys, unfair, 4 * n, k16, by_k, 0, last_fair); break;
        case 1: map_values(values, keys, unfair, 4 * n, k16, by_k, 1, last_fair); break;
        case 2: map_values(values, keys, unfair, 4 * n, k16, by_k, 2, last_fair); break;
        case 3: map_values(values, keys, unfair, 4 * n, k16, by_k, 3, last_fair); break;
        case 4: map_values(values, keys, unfair, 4 * n, k16, by_k, 4, last_fair); break;
        case 5: map_values(values, keys, unfair, 4 * n, k16, by_k, 5, last_fair); break;
        case 6: map_values(values, keys, unfair, 4 * n, k16, by_k, 6, last_fair); break;
        default: map_values(values, keys, unfair, 4 * n, k16, by_k, 7, last_fair); break;
        }
        if (n < CHUNK) /* the groups of 8 below must not see the previous chunk's flags */
            memset(unfair + 4 * n, 0, 4 * (CHUNK - n));
        /* 1% of values for 27 keys: look 8 at a time (one word of flags), and append each one set,
         * in order, found by counting trailing zeros (a flag is one byte: 0 or 1) */
        for (size_t i = 0; i < 4 * n; i += 8) {
            uint64_t flags;
            memcpy(&flags, unfair + i, 8);
            while (flags) {
                redraw[redraws++] = (uint32_t)(4 * w0 + i + (size_t)(__builtin_ctzll(flags) >> 3));
                flags &= flags - 1;
            }
        }
    }
    state = u128_add(u128_mul(lane[0], pcg_back), pcg_back_inc);
    for (size_t i = 0; i < redraws; i++) {
        uint32_t pair = lemire(&state, inc, g, span);
        out[2 * (size_t)redraw[i]] = (uint8_t)(pair / k);
        out[2 * (size_t)redraw[i] + 1] = (uint8_t)(pair % k);
    }
    g[0] = u128_hi(state);
    g[1] = u128_lo(state);
    return redraws;
}

/* How many 16-bit values the mapping above gets wrong for k keys (none: the tests ask). */
CLONES size_t monkey_check_division(uint32_t k) {
    unsigned shift;
    const uint16_t by_k = divisor(k, &shift);
    size_t wrong = 0;
    for (uint32_t v = 0; v < 65536u; v++) {
        uint32_t pair = v % (k * k);
        wrong += pair_keys((uint16_t)v, (uint16_t)k, by_k, shift) != (uint16_t)(pair / k | (pair % k) << 8);
    }
    return wrong;
}

/* The smallest start s in [low, high) where typed[s : s + length] equals target[:length],
 * or -1. Blocks of 64 starts are sieved by their first three keys without branches (the
 * compiler vectorises it), and only a block with a hit is looked at start by start. */
CLONES static ptrdiff_t first_match(const uint8_t *typed, size_t low, size_t high, const uint8_t *target, size_t length) {
    const uint8_t t0 = target[0];
    size_t s = low;
    if (length >= 3) {
        const uint8_t t1 = target[1], t2 = target[2];
        while (s + 64 <= high) {
            uint8_t any = 0;
            for (size_t i = 0; i < 64; i++)
                any |= (uint8_t)((typed[s + i] == t0) & (typed[s + i + 1] == t1) & (typed[s + i + 2] == t2));
            if (any) {
                for (size_t i = s; i < s + 64; i++)
                    if (typed[i] == t0 && memcmp(typed + i, target, length) == 0)
                        return (ptrdiff_t)i;
            }
            s += 64;
        }
    } else if (length == 2) {
        const uint8_t t1 = target[1];
        while (s + 64 <= high) {
            uint8_t any = 0; /* bytes, not ints: 32 lanes to a vector, not 8 */
            for (size_t i = 0; i < 64; i++)
                any |= (uint8_t)((typed[s + i] == t0) & (typed[s + i + 1] == t1));
            if (any) {
                for (size_t i = s; i < s + 64; i++)
                    if (typed[i] == t0 && typed[i + 1] == t1 && memcmp(typed + i, target, length) == 0)
                        return (ptrdiff_t)i;
            }
            s += 64;
        }
    }
    for (; s < high; s++)
        if (typed[s] == t0 && memcmp(typed + s, target, length) == 0)
            return (ptrdiff_t)s;
    return -1;
}

/* As PrefixMatcher.find: new records in typed[:n] as (index of the last key, length), in
 * order, at most `room` of them; typed[:fresh] was searched before. Returns how many. */
CLONES size_t monkey_prefix_find(const uint8_t *typed, size_t n, size_t fresh, size_t record, const uint8_t *target,
                          size_t target_length, int64_t *ends, int64_t *lengths, size_t room) {
    size_t found = 0;
    while (record < target_length && found < room) {
        size_t length = record + 1;
        if (n + 1 <= length)
            break;
        size_t low = fresh + 1 >= length ? fresh + 1 - length : 0;
        size_t high = n - length + 1;
        if (high <= low)
            break;
        ptrdiff_t start = first_match(typed, low, high, target, length);
        if (start < 0)
            break;
        ends[found] = (int64_t)((size_t)start + length - 1);
        lengths[found] = (int64_t)length;
        found++;
        record = length;
    }
    return found;
}

/* The 20-bit code of the 4 keys at p (5 bits a key, the first lowest): AnywhereMatcher's n-gram
 * code for keys below 32. */
static inline __attribute__((always_inline)) uint32_t gram_code(const uint8_t *p) {
    uint32_t w;
    memcpy(&w, p, 4);
    return (w & 0x1Fu) | ((w >> 3) & (0x1Fu << 5)) | ((w >> 6) & (0x1Fu << 10)) | ((w >> 9) & (0x1Fu << 15));
}

static inline __attribute__((always_inline)) unsigned gram_known(const uint8_t *gram_bits, uint32_t code) {
    return (gram_bits[code >> 3] >> (code & 7)) & 1u;
}

/* AnywhereMatcher's index, as kernel.py hands it over: the 4-grams the corpus has (a bit per
 * 20-bit code, least significant first: 128 KiB, so that it stays in the L2 cache), the sorted
 * codes of every corpus position's next `depth` letters (base key count + 1, letters 1..k, 0
 * after a work's end), and the corpus itself (works separated by the key count). */
struct anywhere {
    const uint8_t *gram_bits;
    const uint64_t *codes;
    size_t code_count;
    uint64_t base;
    size_t depth;
    const uint8_t *corpus;
    size_t corpus_length;
};

/* Whether the corpus has the `length` keys at window (the exact answer: the grams are a quick
 * no, the sorted codes decide up to `depth` keys, the text itself beyond). */
static int occurs(const struct anywhere *index, const uint8_t *window, size_t length) {
    for (size_t o = 0; o + 4 <= length; o++)
        if (!gram_known(index->gram_bits, gram_code(window + o)))
            return 0;
    size_t digits = length < index->depth ? length : index->depth;
    uint64_t code = 0, scale = 1;
    for (size_t i = 0; i < digits; i++)
        code = code * index->base + window[i] + 1u;
    for (size_t i = digits; i < index->depth; i++)
        scale *= index->base;
    const uint64_t low = code * scale, high = low + (scale - 1);
    size_t first = 0, count = index->code_count; /* the first code at or above low */
    while (count > 0) {
        size_t half = count / 2;
        if (index->codes[first + half] < low) {
            first += half + 1;
            count -= half + 1;
        } else {
            count = half;
        }
    }
    if (first == index->code_count || index->codes[first] > high)
        return 0;
    if (length <= index->depth)
        return 1;
    /* Longer than a code: look in the text (rare: the first `depth` keys occur somewhere). */
    for (size_t at = 0; at + length <= index->corpus_length; at++) {
        const uint8_t *hit = memchr(index->corpus + at, window[0], index->corpus_length - length + 1 - at);
        if (hit == NULL)
            return 0;
        at = (size_t)(hit - index->corpus);
        if (memcmp(hit, window, length) == 0)
            return 1;
    }
    return 0;
}

/* Bit j % 64 of ok[j / 64]: whether the aligned block typed[4j : 4j + 4] occurs in the corpus,
 * for the `blocks` whole blocks, from `first` (a multiple of 64) on; ok[blocks / 64 + 1] is room
 * for a word of zeros after. The codes are packed 64 at a time (whole vectors), then looked up one
 * by one into a word of bits. */
static void sieve_blocks(const uint8_t *typed, size_t first, size_t blocks, const uint8_t *gram_bits, uint64_t *ok) {
    uint32_t code[64];
    for (size_t j0 = first; j0 < blocks; j0 += 64) {
        size_t count = blocks - j0 < 64 ? blocks - j0 : 64;
        for (size_t i = 0; i < count; i++)
            code[i] = gram_code(typed + 4 * (j0 + i));
        uint64_t bits = 0;
        for (size_t i = 0; i < count; i++)
            bits |= (uint64_t)gram_known(gram_bits, code[i]) << i;
        ok[j0 / 64] = bits;
    }
    ok[(blocks + 63) / 64] = 0;
    ok[(blocks + 63) / 64 + 1] = 0;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* The same with AVX2, picked at run time: eight blocks at a time, their table bits gathered as
 * 32-bit words (the table read as little-endian words: bit code % 32 of word code / 32). The
 * blocks after the last whole word of 64 go through sieve_blocks. */
__attribute__((target("avx2"))) static inline __m256i avx2_codes(const uint8_t *at) {
    /* keys below 32: a + 32 b and c + 32 d in 16-bit lanes, then (a + 32 b) + 1024 (c + 32 d) */
    __m256i w = _mm256_loadu_si256((const __m256i *)(const void *)at);
    __m256i pairs = _mm256_maddubs_epi16(w, _mm256_set1_epi16(32 << 8 | 1));
    return _mm256_madd_epi16(pairs, _mm256_set1_epi32(1024 << 16 | 1));
}

/* The table's bit for each of eight codes, as the low 8 bits, in order. */
__attribute__((target("avx2"))) static inline unsigned avx2_known(__m256i code, const uint8_t *gram_bits) {
    __m256i word = _mm256_i32gather_epi32((const int *)(const void *)gram_bits, _mm256_srli_epi32(code, 5), 4);
    __m256i bit = _mm256_slli_epi32(_mm256_srlv_epi32(word, _mm256_and_si256(code, _mm256_set1_epi32(31))), 31);
    return (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(bit));
}

__attribute__((target("avx2"))) static void sieve_blocks_avx2(const uint8_t *typed, size_t blocks,
                                                              const uint8_t *gram_bits, uint64_t *ok) {
    size_t whole = blocks / 64 * 64;
    for (size_t j0 = 0; j0 < whole; j0 += 64) {
        uint64_t bits = 0;
        for (unsigned i = 0; i < 64; i += 8)
            bits |= (uint64_t)avx2_known(avx2_codes(typed + 4 * (j0 + i)), gram_bits) << i;
        ok[j0 / 64] = bits;
    }
    sieve_blocks(typed, whole, blocks, gram_bits, ok);
}
#define SIEVE_AVX2 1
#endif

/* The block sieve, with AVX2 where `vector` asks and the processor has it (the same bits either
 * way: the tests ask for both). */
size_t monkey_sieve(const uint8_t *typed, size_t blocks, const uint8_t *gram_bits, uint64_t *ok, int vector) {
#ifdef SIEVE_AVX2
    static int avx2 = -1;
    if (avx2 < 0)
        avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    if (vector && avx2) {
        sieve_blocks_avx2(typed, blocks, gram_bits, ok);
        return 1;
    }
#else
    (void)vector;
#endif
    sieve_blocks(typed, 0, blocks, gram_bits, ok);
    return 0;
}

/* The smallest end e in [first_end, n) of a window typed[e - length + 1 : e + 1] that occurs in
 * the corpus, or -1. From 7 keys on, each window holds whole aligned blocks; a window whose
 * first ones (up to three) are not all known 4-grams cannot occur, and that sieve, one bit a
 * block, leaves a few windows in a thousand to look at. */
static ptrdiff_t first_window(const uint8_t *typed, size_t n, size_t first_end, size_t length,
                              const uint64_t *ok, const struct anywhere *index) {
    if (n < length || first_end >= n)
        return -1;
    size_t first_start = first_end + 1 >= length ? first_end + 1 - length : 0, last_start = n - length;
    size_t inside = length >= 7 ? (length - 3) / 4 : 0; /* whole aligned blocks in every window */
    if (inside == 0) {
        for (size_t s = first_start; s <= last_start; s++)
            if (occurs(index, typed + s, length))
                return (ptrdiff_t)(s + length - 1);
        return -1;
    }
    const unsigned needed = inside < 3 ? (unsigned)inside : 3;
    /* the window starting at s has its first whole block at (s + 3) / 4: block j owns starts
     * 4j - 3 .. 4j, so going through blocks in order goes through starts in order */
    size_t first_block = (first_start + 3) / 4, last_block = (last_start + 3) / 4;
    for (size_t word = first_block / 64; word <= last_block / 64; word++) {
        uint64_t run = ok[word];
        for (unsigned d = 1; d < needed; d++)
            run &= (ok[word] >> d) | (ok[word + 1] << (64 - d));
        while (run) {
            size_t block = 64 * word + (size_t)__builtin_ctzll(run);
            run &= run - 1;
            if (block < first_block)
                continue;
            if (block > last_block)
                return -1;
            size_t from = block ? 4 * block - 3 : 0;
            for (size_t s = from < first_start ? first_start : from; s <= 4 * block && s <= last_start; s++)
                if (occurs(index, typed + s, length))
                    return (ptrdiff_t)(s + length - 1);
        }
    }
    return -1;
}

/* As AnywhereMatcher.find for 32 keys or fewer: new records in typed[:n] as (index of the last key,
 * length), in order, at most `room` of them; typed[:fresh] was searched before. `ok` is scratch
 * room for n / 256 + 3 words. Returns how many. */
CLONES size_t monkey_anywhere_find(const uint8_t *typed, size_t n, size_t fresh, size_t record,
                                   const uint8_t *gram_bits, const uint64_t *codes, size_t code_count, uint64_t base,
                                   size_t depth, const uint8_t *corpus, size_t corpus_length, uint64_t *ok,
                                   int64_t *ends, int64_t *lengths, size_t room) {
    const struct anywhere index = {gram_bits, codes, code_count, base, depth, corpus, corpus_length};
    monkey_sieve(typed, n / 4, gram_bits, ok, 1);
    size_t found = 0;
    while (found < room) {
        size_t length = record + 1;
        ptrdiff_t end = first_window(typed, n, fresh > length - 1 ? fresh : length - 1, length, ok, &index);
        if (end < 0)
            break;
        ends[found] = (int64_t)end;
        lengths[found] = (int64_t)length;
        found++;
        record = length;
    }
    return found;
}

/* The interface kernel.py was written against, checked when the library is loaded: its version
 * (raised whenever a function's arguments change) and the sizes, in bytes, of what kernel.py
 * hands over: the generator's six words, a size_t, a pointer. A library that answers otherwise is
 * rebuilt, or not used; never called with arguments it would misread. */
#define MONKEY_ABI_VERSION 1u
uint32_t monkey_abi(uint64_t *sizes, uint32_t room) {
    const uint64_t mine[] = {6 * sizeof(uint64_t), sizeof(size_t), sizeof(void *)};
    for (uint32_t i = 0; i < room && i < sizeof mine / sizeof mine[0]; i++)
        sizes[i] = mine[i];
    return MONKEY_ABI_VERSION;
}
