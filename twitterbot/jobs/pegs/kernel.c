/* The peg counter's compiled kernel: one level of count.py's breadth-first count, faster.
 *
 * Compiled at first use by kernel.py with the system C compiler and loaded with ctypes. It
 * computes exactly what count.py's numpy path computes for a level: each child's smallest
 * orientation, the jump sequences reaching it modulo 2^64 and modulo PRIME, the sequences that
 * end in a parent with no jump, and the level sorted by position, so that the two paths give the
 * same arrays, level files and checkpoints.
 *
 * - Orientations are linear over exclusive-or: the image of (parent ^ jump) is the parent's image
 *   ^ the jump's image. So a parent's images are looked up once (a table per symmetry and byte),
 *   and each child costs one exclusive-or and one minimum per symmetry.
 * - Children are added up in an open-addressing hash table (linear probing, Fibonacci hashing),
 *   each slot prefetched a few children before it is touched, since the table is far bigger than
 *   the processor's caches and most of the time would otherwise be spent waiting for memory.
 * - The level is then compacted, sorted by an LSD radix sort on 11-bit digits, and copied out.
 *
 * Plain C99 with 64-bit integers: it builds on 32-bit targets too.
 */
#if defined(__linux__)
#define _DEFAULT_SOURCE /* madvise and MAP_ANONYMOUS under -std=c99 */
#include <sys/mman.h>
#endif
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PRIME 4294967291u /* count.PRIME: the largest prime below 2^32 */
#define RING 16           /* children in flight between their prefetch and their insertion */
#define MOST_SYMMETRIES 12
#define LOAD_NUMERATOR 3 /* grow past a load of 3/4 */
#define LOAD_DENOMINATOR 4

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(address) __builtin_prefetch((address), 1)
#else
#define PREFETCH(address) ((void)(address))
#endif

/* Big arrays, zeroed. On Linux they are mapped on 2 MiB boundaries and asked to be backed by
 * huge pages: a hash table's every access lands on a random page, and with 4 KiB pages most of
 * them would first miss the processor's address cache (TLB). Elsewhere, calloc. */
#if defined(__linux__) && defined(MADV_HUGEPAGE)
#define HUGE_PAGE ((size_t)2 << 20)
static void *big_zeroed(size_t bytes) {
    size_t rounded = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    char *mapped = mmap(NULL, rounded + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED)
        return NULL;
    size_t head = (HUGE_PAGE - (uintptr_t)mapped % HUGE_PAGE) % HUGE_PAGE;
    if (head)
        munmap(mapped, head);
    munmap(mapped + head + rounded, HUGE_PAGE - head);
    madvise(mapped + head, rounded, MADV_HUGEPAGE); /* a hint: without it, plain pages */
    return mapped + head;
}
static void big_free(void *memory, size_t bytes) {
    if (memory)
        munmap(memory, (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE);
}
/* Let go of all but the first `keep` bytes. */
static void big_shrink(void *memory, size_t bytes, size_t keep) {
    size_t from = (keep + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE, to = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    if (to > from)
        munmap((char *)memory + from, to - from);
}
#else
static void *big_zeroed(size_t bytes) { return calloc(1, bytes ? bytes : 1); }
static void big_free(void *memory, size_t bytes) {
    (void)bytes;
    free(memory);
}
static void big_shrink(void *memory, size_t bytes, size_t keep) { (void)memory, (void)bytes, (void)keep; }
#endif

typedef struct {
    uint64_t key; /* a canonical position; 0 is an empty slot (a child always keeps a peg) */
    uint64_t count;
    uint32_t check;
    uint32_t unused;
} slot_t;

typedef struct {
    slot_t *slots;
    size_t capacity, used;
} table_t;

/* The board, as kernel.py hands it over: symmetries x chunks x 2^bits images of each chunk of
 * a position, and per jump its needs/flips masks and its flips' image under each symmetry. */
typedef struct {
    uint32_t symmetries, chunks, jumps, bits; /* a position is looked up `bits` at a time */
    const uint64_t *tables, *needs, *flips, *images;
} board_t;

static inline uint32_t lowest_bit(uint64_t bits) { /* bits != 0 */
#if defined(__GNUC__) || defined(__clang__)
    return (uint32_t)__builtin_ctzll(bits);
#else
    uint32_t at = 0;
    while (!(bits & 1))
        bits >>= 1, at++;
    return at;
#endif
}

static inline size_t slot_of(uint64_t key, size_t capacity) {
    uint64_t hash = key * 0x9E3779B97F4A7C15ULL;
    return (size_t)(((hash >> 32) * (uint64_t)capacity) >> 32); /* capacity < 2^32 */
}

static inline uint32_t add_check(uint32_t a, uint32_t b) {
    uint64_t sum = (uint64_t)a + b;
    return (uint32_t)(sum >= PRIME ? sum - PRIME : sum);
}

static void insert(table_t *table, uint64_t key, size_t at, uint64_t count, uint32_t check) {
    slot_t *slots = table->slots;
    for (;;) {
        if (slots[at].key == key) {
            slots[at].count += count; /* modulo 2^64 */
            slots[at].check = add_check(slots[at].check, check);
            return;
        }
        if (slots[at].key == 0) {
            slots[at].key = key;
            slots[at].count = count;
            slots[at].check = check;
            table->used++;
            return;
        }
        if (++at == table->capacity)
            at = 0;
    }
}

/* Whether a table of `capacity` slots can be addressed: slot_of needs capacity < 2^32, and the
 * bytes must fit a size_t (on a 32-bit system, 4 GiB). */
static int too_big(size_t capacity) {
    return (uint64_t)capacity >= ((uint64_t)1 << 32) || capacity > SIZE_MAX / sizeof(slot_t);
}

static size_t capacity_for(size_t entries) {
    size_t capacity = entries / LOAD_NUMERATOR * LOAD_DENOMINATOR + 64;
    return capacity < 1024 ? 1024 : capacity;
}

/* A table for about `expected` positions, or NULL without the memory. */
void *pegs_table_new(size_t expected) {
    table_t *table = calloc(1, sizeof *table);
    if (!table)
        return NULL;
    table->capacity = capacity_for(expected);
    if (too_big(table->capacity) ||
        !(table->slots = big_zeroed(table->capacity * sizeof(slot_t)))) {
        free(table);
        return NULL;
    }
    return table;
}

void pegs_table_free(void *handle) {
    table_t *table = handle;
    if (table) {
        big_free(table->slots, table->capacity * sizeof(slot_t));
        free(table);
    }
}

size_t pegs_table_size(const void *handle) { return ((const table_t *)handle)->used; }

/* Half again as many slots; 0, or -1 without the memory (the table is then unchanged). */
static int grow(table_t *table) {
    size_t capacity = table->capacity + table->capacity / 2;
    if (too_big(capacity))
        return -1;
    slot_t *slots = big_zeroed(capacity * sizeof(slot_t)), *old = table->slots;
    if (!slots)
        return -1;
    table_t bigger = {slots, capacity, 0};
    for (size_t i = 0; i < table->capacity; i++)
        if (old[i].key)
            insert(&bigger, old[i].key, slot_of(old[i].key, capacity), old[i].count, old[i].check);
    big_free(old, table->capacity * sizeof(slot_t));
    *table = bigger;
    return 0;
}

typedef struct {
    uint64_t key, count;
    size_t at;
    uint32_t check;
} pending_t;

/* Children on their way into a table: each one's slot is prefetched when it joins the ring and
 * written RING children later, once the memory has arrived. */
typedef struct {
    pending_t items[RING];
    size_t head, pending;
} ring_t;

static void ring_flush(table_t *table, ring_t *ring) {
    for (; ring->pending; ring->pending--, ring->head = (ring->head + 1) % RING) {
        const pending_t *old = &ring->items[ring->head];
        insert(table, old->key, old->at, old->count, old->check);
    }
}

static inline void ring_push(table_t *table, ring_t *ring, uint64_t key, uint64_t count, uint32_t check) {
    size_t at = slot_of(key, table->capacity);
    PREFETCH(&table->slots[at]);
    PREFETCH((const char *)&table->slots[at] + 64);
    if (ring->pending == RING) {
        const pending_t *old = &ring->items[ring->head];
        insert(table, old->key, old->at, old->count, old->check);
        ring->head = (ring->head + 1) % RING;
        ring->pending--;
    }
    ring->items[(ring->head + ring->pending) % RING] = (pending_t){key, count, at, check};
    ring->pending++;
}

/* Room in the table for `more` entries beyond those in the ring: the ring emptied and the table
 * grown first if need be (a pending slot number is only good for the capacity it was made for).
 * 0, or -1 without memory. */
static int make_room(table_t *table, ring_t *ring, size_t more) {
    if (table->used + ring->pending + more < table->capacity / LOAD_DENOMINATOR * LOAD_NUMERATOR)
        return 0;
    ring_flush(table, ring);
    return grow(table);
}

static void images_of(const board_t *board, uint64_t position, uint64_t *image) {
    const uint32_t bits = board->bits, chunks = board->chunks;
    const uint64_t mask = ((uint64_t)1 << bits) - 1;
    size_t at[64];
    for (uint32_t c = 0; c < chunks; c++)
        at[c] = ((size_t)c << bits) + (size_t)((position >> (bits * c)) & mask);
    for (uint32_t s = 0; s < board->symmetries; s++) {
        const uint64_t *table = board->tables + ((size_t)s * chunks << bits);
        uint64_t value = 0;
        for (uint32_t c = 0; c < chunks; c++)
            value |= table[at[c]];
        image[s] = value;
    }
}

/* Which of `shares` shares of a level a position belongs to (shares.owners, the same numbers).
 * A mix of its own (MurmurHash3's finaliser), not the table's hash: within one share, the
 * positions must still spread over every slot of that share's table. */
static inline uint32_t share_of(uint64_t key, uint32_t shares) {
    key ^= key >> 33;
    key *= 0xFF51AFD7ED558CCDULL;
    key ^= key >> 33;
    return (uint32_t)(((key >> 32) * shares) >> 32);
}

/* Expand parents[0..n): each child's smallest orientation, with its parent's counts. A child of
 * share `own` (of `shares`, by share_of) is added to the table; a child of another share s is
 * appended to the out arrays from s * room on, filled[s] children there so far, for that share's
 * table (pegs_table_add). With own >= shares there is no table (handle NULL): every child goes out.
 * The sequences ending in a parent with no jump are added to stuck[0] (modulo 2^64) and stuck[1]
 * (modulo PRIME). Stops before a parent whose children might not fit in a share's room; returns
 * how many parents it expanded, or (size_t)-1 without memory. */
size_t pegs_expand(void *handle, const board_t *board, const uint64_t *parents, const uint64_t *counts,
                   const uint32_t *checks, size_t n, uint64_t *stuck, uint32_t shares, uint32_t own,
                   uint64_t *out_keys, uint64_t *out_counts, uint32_t *out_checks, size_t room, size_t *filled) {
    table_t *table = handle;
    ring_t ring = {.head = 0, .pending = 0};
    uint64_t image[MOST_SYMMETRIES];
    const uint32_t symmetries = board->symmetries, jumps = board->jumps;
    const int sending = shares > 1 || own >= shares; /* some children go out */
    size_t fullest = 0, p;
    for (uint32_t s = 0; s < shares; s++)
        fullest = filled[s] > fullest ? filled[s] : fullest;
    for (p = 0; p < n; p++) {
        if (sending && room - fullest < jumps)
            break;
        if (own < shares && make_room(table, &ring, jumps))
            return (size_t)-1;
        const uint64_t parent = parents[p], count = counts[p];
        const uint32_t check = checks[p];
        int moved = 0;
        for (uint32_t word = 0; word * 64 < jumps; word++) {
            /* The jumps this parent allows, as bits: no branch per jump, whose outcome would
             * be a coin toss for the processor's branch predictor. */
            const uint32_t first = word * 64, last = jumps - first < 64 ? jumps - first : 64;
            const uint64_t *flips = board->flips + first, *needs = board->needs + first;
            uint64_t allowed = 0;
            for (uint32_t b = 0; b < last; b++)
                allowed |= (uint64_t)((parent & flips[b]) == needs[b]) << b;
            if (allowed && !moved) {
                images_of(board, parent, image);
                moved = 1;
            }
            for (; allowed; allowed &= allowed - 1) {
                const uint32_t j = first + lowest_bit(allowed);
                const uint64_t *jump = board->images + (size_t)j * symmetries;
                uint64_t best = image[0] ^ jump[0];
                for (uint32_t s = 1; s < symmetries; s++) {
                    uint64_t other = image[s] ^ jump[s];
                    best = other < best ? other : best;
                }
                const uint32_t share = shares > 1 ? share_of(best, shares) : 0;
                if (share == own) {
                    ring_push(table, &ring, best, count, check);
                    continue;
                }
                size_t at = filled[share]++;
                fullest = at + 1 > fullest ? at + 1 : fullest;
                at += (size_t)share * room;
                out_keys[at] = best, out_counts[at] = count, out_checks[at] = check;
            }
        }
        if (!moved) {
            stuck[0] += count;
            stuck[1] = add_check((uint32_t)(stuck[1] % PRIME), check);
        }
    }
    if (own < shares)
        ring_flush(table, &ring);
    return p;
}

/* Add n positions with their counts (another share's children, from pegs_expand's out) to the
 * table. 0, or -1 without memory. */
int pegs_table_add(void *handle, const uint64_t *keys, const uint64_t *counts, const uint32_t *checks, size_t n) {
    table_t *table = handle;
    ring_t ring = {.head = 0, .pending = 0};
    for (size_t i = 0; i < n; i++) {
        if (make_room(table, &ring, 1))
            return -1;
        ring_push(table, &ring, keys[i], counts[i], checks[i]);
    }
    ring_flush(table, &ring);
    return 0;
}

/* Sort slots[0..n) by key: LSD radix sort, 11 bits a pass over the `bits` low bits, through
 * `spare` (n slots). Returns the array holding the result (slots or spare). */
static slot_t *radix_sort(slot_t *slots, slot_t *spare, size_t n, unsigned bits) {
    size_t offsets[2048];
    for (unsigned shift = 0; shift < bits; shift += 11) {
        memset(offsets, 0, sizeof offsets);
        for (size_t i = 0; i < n; i++)
            offsets[(slots[i].key >> shift) & 2047]++;
        size_t total = 0, largest = 0;
        for (size_t d = 0; d < 2048; d++) {
            size_t here = offsets[d];
            largest = here > largest ? here : largest;
            offsets[d] = total;
            total += here;
        }
        if (largest == n)
            continue; /* every key has this digit: the pass would change nothing */
        for (size_t i = 0; i < n; i++)
            spare[offsets[(slots[i].key >> shift) & 2047]++] = slots[i];
        slot_t *swap = slots;
        slots = spare;
        spare = swap;
    }
    return slots;
}

/* The table's positions sorted, with their counts, into keys/counts/checks (pegs_table_size
 * long each); the table is emptied (freed but for its handle). 0, or -1 without memory. */
int pegs_table_take(void *handle, unsigned bits, uint64_t *keys, uint64_t *counts, uint32_t *checks) {
    table_t *table = handle;
    slot_t *slots = table->slots;
    size_t n = 0;
    for (size_t i = 0; i < table->capacity; i++)
        if (slots[i].key)
            slots[n++] = slots[i];
    big_shrink(slots, table->capacity * sizeof(slot_t), n * sizeof(slot_t)); /* let the empty slots go */
    slot_t *spare = big_zeroed(n * sizeof(slot_t));
    if (!spare)
        return -1;
    slot_t *sorted = radix_sort(slots, spare, n, bits);
    big_free(sorted == slots ? spare : slots, n * sizeof(slot_t)); /* before the copy: a lower peak */
    for (size_t i = 0; i < n; i++) {
        keys[i] = sorted[i].key;
        counts[i] = sorted[i].count;
        checks[i] = sorted[i].check;
    }
    big_free(sorted, n * sizeof(slot_t));
    table->slots = NULL;
    table->capacity = table->used = 0;
    return 0;
}

/* The smallest orientation of each of `n` positions (for finishable_counts). */
void pegs_canonical(const board_t *board, const uint64_t *positions, size_t n, uint64_t *out) {
    uint64_t image[MOST_SYMMETRIES];
    for (size_t i = 0; i < n; i++) {
        images_of(board, positions[i], image);
        uint64_t best = image[0];
        for (uint32_t s = 1; s < board->symmetries; s++)
            best = image[s] < best ? image[s] : best;
        out[i] = best;
    }
}

/* Sort n positions of `bits` bits in place (LSD radix sort, 11 bits a pass). 0, or -1 without
 * memory (then they are left as they were). */
int pegs_sort(uint64_t *values, size_t n, unsigned bits) {
    uint64_t *spare = big_zeroed((n ? n : 1) * sizeof *spare), *from = values, *to = spare;
    if (!spare)
        return -1;
    size_t offsets[2048];
    for (unsigned shift = 0; shift < bits; shift += 11) {
        memset(offsets, 0, sizeof offsets);
        for (size_t i = 0; i < n; i++)
            offsets[(from[i] >> shift) & 2047]++;
        size_t total = 0;
        for (size_t d = 0; d < 2048; d++) {
            size_t here = offsets[d];
            offsets[d] = total;
            total += here;
        }
        for (size_t i = 0; i < n; i++)
            to[offsets[(from[i] >> shift) & 2047]++] = from[i];
        uint64_t *swap = from;
        from = to;
        to = swap;
    }
    if (from != values)
        memcpy(values, from, n * sizeof *values);
    big_free(spare, (n ? n : 1) * sizeof *spare);
    return 0;
}

/* Reorder `n` positions (with their counts) by share, keeping their order within a share, into
 * the out arrays; share s is then out[starts[s]..starts[s+1]). 0, or -1 without memory. */
int pegs_cut(const uint64_t *keys, const uint64_t *counts, const uint32_t *checks, size_t n, uint32_t shares,
             uint64_t *out_keys, uint64_t *out_counts, uint32_t *out_checks, size_t *starts) {
    size_t *next = calloc(shares ? shares : 1, sizeof *next);
    if (!next)
        return -1;
    for (size_t i = 0; i < n; i++)
        next[share_of(keys[i], shares)]++;
    size_t total = 0;
    for (uint32_t s = 0; s < shares; s++) {
        size_t here = next[s];
        starts[s] = next[s] = total;
        total += here;
    }
    starts[shares] = total;
    for (size_t i = 0; i < n; i++) {
        size_t at = next[share_of(keys[i], shares)]++;
        out_keys[at] = keys[i], out_counts[at] = counts[i], out_checks[at] = checks[i];
    }
    free(next);
    return 0;
}

/* How many values two sorted arrays of distinct values have in common. */
size_t pegs_common(const uint64_t *a, size_t n, const uint64_t *b, size_t m) {
    size_t i = 0, j = 0, found = 0;
    while (i < n && j < m) {
        if (a[i] < b[j])
            i++;
        else if (b[j] < a[i])
            j++;
        else
            found++, i++, j++;
    }
    return found;
}

/* ---- The solver's depth-first search (solve.py's _search, in C) ----
 *
 * One search walks the jumps in its own order with an explicit stack, a slice of positions per
 * call, so Python can report progress and let other orders take turns. Positions are two 64-bit
 * words, so boards of up to 128 holes. Every search of one solve shares a table of dead
 * positions (none of their continuations reaches the goal), each stored once, in its smallest
 * orientation: a child's orientations are its parent's ^ its jump's, one exclusive-or each.
 *
 * The dead table is a cache, not a set: buckets of four positions (one cache line), a full
 * bucket forgetting its oldest. Forgetting a dead position costs time, never correctness, and
 * the memory stays what the caller gave. */

#define MOST_PAGODAS 8
#define MOST_DEPTH 128
#define BUCKET 4

typedef struct {
    uint64_t lo, hi;
} pair_t;

typedef struct {
    uint32_t jumps, symmetries, pagodas, last_depth, start_pegs;
    uint32_t accept;         /* 0: equal to goal; 1: a peg in ends; 2: in the sorted edge */
    const pair_t *needs;     /* [jumps]: pegs in a and b, the hole c empty, within flips */
    const pair_t *flips;     /* [jumps] */
    const pair_t *images;    /* [jumps][symmetries]: each jump's flips in each orientation */
    const double *change;    /* [pagodas][jumps]: what the jump adds to each pagoda's total */
    const double *floor;     /* [pagodas]: the goal's totals; a position below one is dead */
    const uint32_t *order;   /* [jumps]: this search's order */
    const uint64_t *edge;    /* accept 2: sorted positions (boards of at most 64 holes) */
    size_t edge_size;
    pair_t goal, ends;
} hunt_board_t;

typedef struct {
    pair_t position, name;                 /* name: the smallest orientation */
    pair_t image[MOST_SYMMETRIES];
    double weight[MOST_PAGODAS];
    uint32_t next;                         /* the order's index of the next jump to try */
} frame_t;

typedef struct {
    pair_t *slots;
    size_t buckets; /* a power of two */
} dead_t;

typedef struct {
    frame_t stack[MOST_DEPTH + 1];
    uint32_t path[MOST_DEPTH];
    int32_t depth; /* the top frame's; -1 when every sequence has been tried */
    uint32_t fewest;
    uint64_t positions;
} hunt_t;

static inline int pair_less(pair_t a, pair_t b) { return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo); }
static inline int pair_zero(pair_t a) { return !(a.lo | a.hi); }

static inline pair_t *bucket_of(const dead_t *dead, pair_t key) {
    uint64_t mixed = key.lo * 0x9E3779B97F4A7C15ull ^ (key.hi + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    return dead->slots + (size_t)((mixed >> 32) & (dead->buckets - 1)) * BUCKET;
}

static int dead_has(const dead_t *dead, pair_t key) {
    const pair_t *bucket = bucket_of(dead, key);
    for (int i = 0; i < BUCKET; i++)
        if (bucket[i].lo == key.lo && bucket[i].hi == key.hi)
            return 1;
    return 0;
}

static void dead_add(dead_t *dead, pair_t key) {
    pair_t *bucket = bucket_of(dead, key);
    memmove(bucket + 1, bucket, (BUCKET - 1) * sizeof *bucket); /* the oldest falls out */
    bucket[0] = key;
}

/* A table of dead positions in about `bytes` of memory (at least one bucket), or NULL. */
void *pegs_dead_new(size_t bytes) {
    dead_t *dead = calloc(1, sizeof *dead);
    if (!dead)
        return NULL;
    dead->buckets = 1;
    while (dead->buckets * 2 * BUCKET * sizeof(pair_t) <= bytes)
        dead->buckets *= 2;
    dead->slots = big_zeroed(dead->buckets * BUCKET * sizeof(pair_t));
    if (!dead->slots) {
        free(dead);
        return NULL;
    }
    return dead;
}

void pegs_dead_free(void *handle) {
    dead_t *dead = handle;
    if (dead) {
        big_free(dead->slots, dead->buckets * BUCKET * sizeof(pair_t));
        free(dead);
    }
}

static int edge_holds(const hunt_board_t *board, pair_t position) {
    if (position.hi)
        return 0;
    size_t low = 0, high = board->edge_size;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (board->edge[middle] < position.lo)
            low = middle + 1;
        else
            high = middle;
    }
    return low < board->edge_size && board->edge[low] == position.lo;
}

static int accepted(const hunt_board_t *board, pair_t position) {
    switch (board->accept) {
    case 0:
        return position.lo == board->goal.lo && position.hi == board->goal.hi;
    case 1:
        return ((position.lo & board->ends.lo) | (position.hi & board->ends.hi)) != 0;
    default:
        return edge_holds(board, position);
    }
}

/* A search standing at the start: `images` are the start's orientations, `weights` its pagoda
 * totals. The caller owns the memory (sizeof hunt_t, from pegs_hunt_size). */
size_t pegs_hunt_size(void) { return sizeof(hunt_t); }

void pegs_hunt_start(hunt_t *hunt, const hunt_board_t *board, const pair_t *images, const double *weights) {
    frame_t *root = &hunt->stack[0];
    memset(hunt, 0, sizeof *hunt);
    root->position = images[0];
    root->name = images[0];
    for (uint32_t s = 0; s < board->symmetries; s++) {
        root->image[s] = images[s];
        if (pair_less(images[s], root->name))
            root->name = images[s];
    }
    for (uint32_t k = 0; k < board->pagodas; k++)
        root->weight[k] = weights[k];
    hunt->fewest = board->start_pegs;
}

/* Search on for about `budget` positions. Returns 0 when the budget is spent, 1 when the path
 * (depth + 1 jumps, board order indices) reaches an accepted position at the last depth, 2 when
 * every sequence has been tried. */
int pegs_hunt(hunt_t *hunt, const hunt_board_t *board, dead_t *dead, uint64_t budget) {
    const uint32_t jumps = board->jumps, symmetries = board->symmetries, pagodas = board->pagodas;
    const uint64_t stop = hunt->positions + budget;
    int32_t depth = hunt->depth;
    while (depth >= 0) {
        frame_t *frame = &hunt->stack[depth];
        const pair_t position = frame->position;
        int entered = 0;
        for (uint32_t i = frame->next; i < jumps; i++) {
            const uint32_t j = board->order[i];
            const pair_t flips = board->flips[j], needs = board->needs[j];
            if ((position.lo & flips.lo) != needs.lo || (position.hi & flips.hi) != needs.hi)
                continue;
            int low = 0;
            for (uint32_t k = 0; k < pagodas; k++)
                low |= frame->weight[k] + board->change[k * jumps + j] < board->floor[k];
            if (low)
                continue;
            frame_t *child = &hunt->stack[depth + 1];
            const pair_t *image = board->images + (size_t)j * symmetries;
            child->position.lo = position.lo ^ flips.lo;
            child->position.hi = position.hi ^ flips.hi;
            child->name = child->position;
            for (uint32_t s = 0; s < symmetries; s++) {
                child->image[s].lo = frame->image[s].lo ^ image[s].lo;
                child->image[s].hi = frame->image[s].hi ^ image[s].hi;
                if (pair_less(child->image[s], child->name))
                    child->name = child->image[s];
            }
            if (dead_has(dead, child->name))
                continue;
            hunt->positions++;
            frame->next = i + 1;
            hunt->path[depth] = j;
            if ((uint32_t)depth + 1 >= board->last_depth) {
                if (accepted(board, child->position)) {
                    hunt->depth = depth;
                    return 1;
                }
                continue; /* checked again if met again: cheaper than a cache entry */
            }
            for (uint32_t k = 0; k < pagodas; k++)
                child->weight[k] = frame->weight[k] + board->change[k * jumps + j];
            child->next = 0;
            depth++;
            if (board->start_pegs - (uint32_t)depth < hunt->fewest)
                hunt->fewest = board->start_pegs - (uint32_t)depth;
            entered = 1;
            break;
        }
        if (!entered) {
            dead_add(dead, frame->name);
            depth--;
        }
        if (hunt->positions >= stop) {
            hunt->depth = depth;
            return depth < 0 ? 2 : 0;
        }
    }
    hunt->depth = -1;
    return 2;
}

/* What a search has done so far: positions examined, the fewest pegs reached. */
uint64_t pegs_hunt_positions(const hunt_t *hunt) { return hunt->positions; }
uint32_t pegs_hunt_fewest(const hunt_t *hunt) { return hunt->fewest; }

/* After pegs_hunt returned 1: the jumps of the solution (board order indices) into `out`, and
 * how many there are. */
uint32_t pegs_hunt_path(const hunt_t *hunt, uint32_t *out) {
    uint32_t length = (uint32_t)(hunt->depth + 1);
    memcpy(out, hunt->path, length * sizeof *out);
    return length;
}

/* The interface kernel.py was written against, checked when the library is loaded: its version
 * (raised whenever a function or a structure kernel.py builds changes) and the sizes, in bytes,
 * of what kernel.py lays out with ctypes, plus the limits it must not exceed. A library that
 * answers otherwise is rebuilt, or not used; never called with arguments it would misread. */
#define PEGS_ABI_VERSION 2u
uint32_t pegs_abi(uint64_t *sizes, uint32_t room) {
    const uint64_t mine[] = {sizeof(board_t), sizeof(pair_t), sizeof(hunt_board_t), sizeof(size_t),
                             MOST_SYMMETRIES, MOST_PAGODAS, MOST_DEPTH};
    for (uint32_t i = 0; i < room && i < sizeof mine / sizeof mine[0]; i++)
        sizes[i] = mine[i];
    return PEGS_ABI_VERSION;
}
