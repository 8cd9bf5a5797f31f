/* SPDX-License-Identifier: MIT */
/*
 * fl_rand.h - the seeded randomness every part draws from (header-only):
 * splitmix64 (a 64-bit state: explore's schedules, import's latency sample),
 * its finaliser as a hash (the dirty-block set, the scenario reader's
 * tables), and xoshiro256** seeded through splitmix64 (the fault engine's
 * streams, one per rule). The same seed gives the same draws on every
 * machine: nothing here reads the clock.
 */
#ifndef FL_RAND_H
#define FL_RAND_H

#include <stdint.h>

/* The splitmix64 finaliser: a 64-bit mix, also a good hash of an integer. */
static inline uint64_t fl_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* One splitmix64 step: advances *state and returns 64 random bits. */
static inline uint64_t fl_splitmix64(uint64_t *state)
{
	return fl_mix64(*state += 0x9e3779b97f4a7c15ull);
}

/* xoshiro256**: a stream of a seed. */
struct fl_prng {
	uint64_t s[4];
};

/* Seeds p with stream `stream` of seed (streams of one seed are independent). */
static inline void fl_prng_seed(struct fl_prng *p, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ fl_splitmix64(&stream);

	for (int i = 0; i < 4; i++)
		p->s[i] = fl_splitmix64(&x);
}

/* Rotates left by k (0 < k < 64). */
static inline uint64_t fl_rotl64(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* The next 64 random bits of p. */
static inline uint64_t fl_prng_next(struct fl_prng *p)
{
	uint64_t *s = p->s, r = fl_rotl64(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = fl_rotl64(s[3], 45);
	return r;
}

/* A uniform double in [0, 1). */
static inline double fl_prng_unit(struct fl_prng *p)
{
	return (double)(fl_prng_next(p) >> 11) * 0x1.0p-53;
}

#endif
