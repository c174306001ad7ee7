/* monkey_draw as a program, for tests/jobs/monkey/test_kernel_32bit.py: built with a cross
 * compiler for 32-bit ARM and run under qemu-arm, where no Python of that machine is at hand.
 * Arguments: the generator's six words, the key count, the number of 64-bit words to draw.
 * Prints the redraw count, the keys in hex, the six words after, and monkey_abi's answer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <inttypes.h>
size_t monkey_draw(uint64_t *g, uint32_t k, uint8_t *out, size_t words, uint32_t *redraw);
uint32_t monkey_abi(uint64_t *sizes, uint32_t room);
int main(int argc, char **argv) {
    uint64_t g[6];
    for (int i = 0; i < 6; i++) g[i] = strtoull(argv[1 + i], NULL, 0);
    uint32_t k = (uint32_t)strtoul(argv[7], NULL, 0);
    size_t words = (size_t)strtoul(argv[8], NULL, 0);
    uint8_t *out = malloc(8 * words);
    uint32_t *redraw = malloc(4 * words * sizeof *redraw);
    size_t redraws = monkey_draw(g, k, out, words, redraw);
    printf("%zu\n", redraws);
    for (size_t i = 0; i < 8 * words; i++) printf("%02x", out[i]);
    printf("\n");
    for (int i = 0; i < 6; i++) printf("%" PRIu64 "\n", g[i]);
    uint64_t sizes[3];
    uint32_t version = monkey_abi(sizes, 3);
    printf("%u %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", version, sizes[0], sizes[1], sizes[2]);
    return 0;
}
