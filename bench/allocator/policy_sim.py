#!/usr/bin/env python3
"""Simulates buddy placement policies on allocation traces (docs/allocator.md, "Runs instead of
rounding"): peak committed / peak requested with first fit and lazily committed granules.

usage: policy_sim.py TRACE... (e.g. ../shared/traces/*.trace)

Policies: `pow2` serves s bytes with one 2^ceil(log2 s) block; `tail` does too but returns the
unused tail as smaller free buddies; `tail-any-order` also takes the lowest-address block of any
adequate order rather than the smallest order. Each uses the lowest-address block, one 2^40-byte
arena, 256-byte units and 2 MiB commit granules that stay committed once touched, as in
BuddyAllocator. The `runs` policy is BuddyAllocator itself: `mpsim alloc-replay TRACE`.
"""
import sys

UNIT = 256
GRANULE = 2 << 20


def pieces(off, size):
    """Maximal aligned power-of-two blocks tiling [off, off + size)."""
    out = []
    while size > 0:
        k = (off & -off).bit_length() - 1 if off else 62
        while (1 << k) > size:
            k -= 1
        out.append((off, k))
        off += 1 << k
        size -= 1 << k
    return out


class Buddy:
    def __init__(self, policy):
        self.policy = policy
        self.free = {}  # order -> set of offsets
        self.order_at = {}  # offset of a free block -> order
        self.arena = 1 << 40
        self.add(0, 40)
        self.committed = set()

    def add(self, off, k):
        self.free.setdefault(k, set()).add(off)
        self.order_at[off] = k

    def remove(self, off, k):
        self.free[k].remove(off)
        del self.order_at[off]

    def find(self, k):
        best = None
        for o in range(k, 41):
            if self.free.get(o):
                cand = (min(self.free[o]), o)
                if self.policy != 'tail-any-order':
                    return cand
                best = min(best, cand) if best else cand
        return best

    def alloc(self, size):
        used = max(1, -(-size // UNIT)) * UNIT
        k = (used - 1).bit_length()
        if self.policy == 'pow2':
            used = 1 << k
        off, o = self.find(k)
        self.remove(off, o)
        while o > k:
            o -= 1
            self.add(off + (1 << o), o)
        for rel, pk in pieces(used, (1 << k) - used):
            self.add(off + rel, pk)
        self.committed.update(range(off // GRANULE, (off + used - 1) // GRANULE + 1))
        return off, used

    def release(self, off, used):
        for o, k in reversed(pieces(off, used)):
            while k < 40:
                buddy = o ^ (1 << k)
                if self.order_at.get(buddy) != k:
                    break
                self.remove(buddy, k)
                o = min(o, buddy)
                k += 1
            self.add(o, k)


def simulate(path, policy):
    b = Buddy(policy)
    live, requested, peak, peak_committed = {}, 0, 0, 0
    for line in open(path):
        if line.startswith('#') or not line.strip():
            continue
        f = line.split()
        if f[0] == 'a':
            live[f[1]] = (b.alloc(int(f[2])), int(f[2]))
            requested += int(f[2])
            peak = max(peak, requested)
            peak_committed = max(peak_committed, len(b.committed) * GRANULE)
        else:
            (off, used), size = live.pop(f[1])
            b.release(off, used)
            requested -= size
    return peak_committed / peak


if __name__ == '__main__':
    for path in sys.argv[1:]:
        for policy in ('pow2', 'tail', 'tail-any-order'):
            print(f'{path}\t{policy}\t{simulate(path, policy):.4f}', flush=True)
