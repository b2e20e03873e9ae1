/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uxdp/spinlock.h: the data path's spinlock, for drivers (and the library's
 * own short critical sections: a pool's remote-return stack).
 */
#ifndef UXDP_SPINLOCK_H
#define UXDP_SPINLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include <uxdp/common.h>

/*
 * A test-and-test-and-set spinlock, inline: what the kernel's drivers take
 * around a shared transmit ring (veth's ptr_ring producer lock). Zero is
 * unlocked ({0} or memset initialises it; nothing to destroy). Inline on
 * purpose: pthread_spin_lock() is a call into libc on every xdp_xmit (the
 * null -> null redirect's single-frame rate rose 7-9% without it).
 */
struct uxdp_spinlock {
	uint32_t locked;
};

/* The same as zeroing it. */
UXDP_INLINE void uxdp_spin_init(struct uxdp_spinlock *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELAXED);
}

UXDP_INLINE void uxdp_spin_lock(struct uxdp_spinlock *l)
{
	for (;;) {
		/* Acquire: what the last holder wrote before its release
		 * is seen by everything after the lock. */
		if (!__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
			return;
		/* Wait with plain loads: spinning on the exchange would
		 * keep taking the line away from the holder. */
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED)) {
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#elif defined(__aarch64__)
			__asm__ __volatile__("yield");
#endif
		}
	}
}

/* Returns true if the lock was taken. */
UXDP_INLINE bool uxdp_spin_trylock(struct uxdp_spinlock *l)
{
	return !__atomic_load_n(&l->locked, __ATOMIC_RELAXED) &&
	       !__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE);
}

UXDP_INLINE void uxdp_spin_unlock(struct uxdp_spinlock *l)
{
	/* Release: the critical section's writes are visible before the
	 * lock is seen free (pairs with the exchange's acquire). */
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

#endif /* UXDP_SPINLOCK_H */
