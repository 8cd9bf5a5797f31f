/* SPDX-License-Identifier: MIT */
/*
 * test_timer.c - the timer queue of common/fl_timer.h, the one both the
 * engine's timer thread and the iSCSI loop use: deadline order, equal
 * deadlines in the order queued, removal from any slot, re-queueing, removal
 * by predicate (a connection's timers), and a random run checked against a
 * sorted model.
 */
#include "fl_timer.h"
#include "runner.h"

#include <stdint.h>
#include <stdlib.h>

struct node {
	struct fl_timer t;
	int id;
	int owner;
};

/* Pops every node due by now; writes their ids to out, returns how many. */
static size_t pop_ids(struct fl_theap *h, uint64_t now, int *out, size_t max)
{
	struct fl_timer *t;
	size_t k = 0;

	while (k < max && (t = fl_theap_pop_due(h, now)))
		out[k++] = ((struct node *)t)->id;
	return k;
}

/* Earlier deadline first; equal deadlines in the order they were queued. */
static void test_order_and_ties(void)
{
	struct fl_theap h = {0};
	struct node n[6];
	static const uint64_t due[6] = {50, 10, 30, 10, 50, 10};
	static const int want[6] = {1, 3, 5, 2, 0, 4};
	int got[6];

	for (int i = 0; i < 6; i++) {
		fl_timer_init(&n[i].t, NULL);
		n[i].id = i;
		CU_ASSERT_EQUAL(fl_theap_push(&h, &n[i].t, due[i]), 0);
	}
	CU_ASSERT_PTR_EQUAL(fl_theap_first(&h), &n[1].t);
	CU_ASSERT_PTR_NULL(fl_theap_pop_due(&h, 9)); /* nothing due yet */
	CU_ASSERT_EQUAL(pop_ids(&h, 10, got, 6), 3);
	CU_ASSERT_EQUAL(pop_ids(&h, UINT64_MAX, got + 3, 3), 3);
	for (int i = 0; i < 6; i++)
		CU_ASSERT_EQUAL(got[i], want[i]);
	CU_ASSERT_PTR_NULL(fl_theap_first(&h));
	fl_theap_free(&h);
}

/* Removing from any slot keeps the order; a node not queued is refused. */
static void test_remove_and_requeue(void)
{
	struct fl_theap h = {0};
	struct node n[8];
	int got[8];

	for (int i = 0; i < 8; i++) {
		fl_timer_init(&n[i].t, NULL);
		n[i].id = i;
		fl_theap_push(&h, &n[i].t, (uint64_t)(8 - i) * 10);
	}
	CU_ASSERT_TRUE(fl_theap_remove(&h, &n[3].t));
	CU_ASSERT_FALSE(fl_theap_remove(&h, &n[3].t));
	CU_ASSERT_EQUAL(n[3].t.heap_index, SIZE_MAX);
	CU_ASSERT_TRUE(fl_theap_remove(&h, &n[7].t)); /* the earliest */
	fl_theap_push(&h, &n[0].t, 1);		      /* re-queued earlier: moves, no copy */
	CU_ASSERT_EQUAL(h.n, 6);
	CU_ASSERT_EQUAL(pop_ids(&h, UINT64_MAX, got, 8), 6);
	CU_ASSERT_EQUAL(got[0], 0);
	CU_ASSERT_EQUAL(got[1], 6);
	CU_ASSERT_EQUAL(got[2], 5);
	CU_ASSERT_EQUAL(got[3], 4);
	CU_ASSERT_EQUAL(got[4], 2);
	CU_ASSERT_EQUAL(got[5], 1);
	fl_theap_free(&h);
}

/* True for a node of the owner in ctx. */
static bool owned(struct fl_timer *t, void *ctx)
{
	return ((struct node *)t)->owner == *(int *)ctx;
}

/* Counts what remove_if hands back; it must be out of the queue already. */
static void gone(struct fl_timer *t, void *ctx)
{
	(void)ctx;
	CU_ASSERT_EQUAL(t->heap_index, SIZE_MAX);
	((struct node *)t)->id = -1;
}

/* remove_if takes out one owner's nodes and leaves the rest in order. */
static void test_remove_if(void)
{
	struct fl_theap h = {0};
	struct node n[100];
	int owner = 2, got[100];
	uint64_t last = 0;
	size_t k;

	for (int i = 0; i < 100; i++) {
		fl_timer_init(&n[i].t, NULL);
		n[i].id = i;
		n[i].owner = i % 3;
		fl_theap_push(&h, &n[i].t, (uint64_t)(i * 7919 % 101));
	}
	CU_ASSERT_EQUAL(fl_theap_remove_if(&h, owned, gone, &owner), 33);
	for (int i = 0; i < 100; i++)
		CU_ASSERT_EQUAL(n[i].id == -1, n[i].owner == 2);
	k = pop_ids(&h, UINT64_MAX, got, 100);
	CU_ASSERT_EQUAL(k, 67);
	for (size_t i = 0; i < k; i++) {
		CU_ASSERT_NOT_EQUAL(n[got[i]].owner, 2);
		CU_ASSERT_TRUE(n[got[i]].t.due_ns >= last);
		last = n[got[i]].t.due_ns;
	}
	fl_theap_free(&h);
}

/* Random pushes, removals and pops against a model: always the least (due, order). */
static void test_random_against_model(void)
{
	enum { N = 300 };
	struct fl_theap h = {0};
	static struct node n[N];
	unsigned seed = 12345;

	for (int i = 0; i < N; i++) {
		fl_timer_init(&n[i].t, NULL);
		n[i].id = i;
	}
	for (int step = 0; step < 20000; step++) {
		int i = (int)(rand_r(&seed) % N), op = (int)(rand_r(&seed) % 3);
		bool in = n[i].t.heap_index != SIZE_MAX;

		if (op == 0) {
			CU_ASSERT_EQUAL(fl_theap_push(&h, &n[i].t, rand_r(&seed) % 50), 0);
		} else if (op == 1) {
			CU_ASSERT_EQUAL(fl_theap_remove(&h, &n[i].t), in);
		} else if (h.n) {
			struct fl_timer *want = NULL, *got;

			for (int j = 0; j < N; j++) {
				struct fl_timer *t = &n[j].t;

				if (t->heap_index != SIZE_MAX &&
				    (!want || t->due_ns < want->due_ns ||
				     (t->due_ns == want->due_ns && t->seq < want->seq)))
					want = t;
			}
			got = fl_theap_pop_due(&h, UINT64_MAX);
			CU_ASSERT_PTR_EQUAL(got, want);
		}
	}
	fl_theap_free(&h);
}

FL_TESTS(timer_tests,
	 FL_TEST(test_order_and_ties),
	 FL_TEST(test_remove_and_requeue),
	 FL_TEST(test_remove_if),
	 FL_TEST(test_random_against_model));

FL_SUITES(FL_SUITE("timer", NULL, NULL, timer_tests));
