"""The transposition table of exhaustive max^n (`kernels.maxn`), compiled (numba).

An open-addressed hash table of fixed-width slots (the subtree's size, a 64-bit hash of (state, turns left) as the
key, a second, independent 64-bit hash compared on every hit, the value's bits) in one int64 array. A false hit
needs both hashes to collide: about 1e-20 over a search of 10^9 subtrees. Leaves are not stored: evaluating one is
cheaper than looking it up.

The table has a memory bound. It starts small and doubles whenever it is half full (linear probing: an entry takes
the first free slot from its home on); once it has reached its bound it fills up, and a subtree that finds its
`PROBES` slots taken replaces the smallest subtree stored there (the cheapest to search again). A subtree that has
been replaced is searched again when it is met again, so a bound changes the work done, never the values, the
decisions or the tree's size.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.typed import List

# a slot of the transposition table: [size (0: empty), key, check, the value's bits...]
SIZE, KEY, CHECK, VALUE = range(4)
PROBES = 8  # slots a key may occupy, from its home slot on
FIRST_SLOTS = 1024
# the table's counters: [slot limit, subtrees stored, slots in use, stored subtrees replaced, longest probe]
LIMIT, STORED, USED, REPLACED, LONGEST = range(5)


@njit(cache=True)
def new_table(n_players, max_slots):
    """An empty transposition table for `maxn`: a list of two arrays, the slots (replaced by a bigger array as the
    table grows) and one row of counters. One typed list, not a tuple: numba dispatches on it as fast as on an
    array, which matters to the many small searches of the goals."""
    table = List()
    table.append(np.zeros((min(FIRST_SLOTS, max_slots), VALUE + n_players), dtype=np.int64))
    counts = np.zeros((1, LONGEST + 1), dtype=np.int64)  # 2-d, as the list's items must all be
    counts[0, LIMIT] = max_slots
    table.append(counts)
    return table


@njit(cache=True)
def _hash(owner, armies, mover, phase, attacks, turns, basis, prime) -> int:
    """FNV-1a over the state's numbers, with the given offset basis and prime."""
    h = np.uint64(basis)
    p = np.uint64(prime)
    for t in range(owner.shape[0]):
        h = (h ^ np.uint64(owner[t] + 8)) * p
        h = (h ^ np.uint64(armies[t])) * p
    for x in (mover, phase, attacks, turns):
        h = (h ^ np.uint64(x + 1)) * p
    return np.int64(h)


@njit(cache=True)
def _keys(owner, armies, mover, phase, attacks, turns):
    """Two independent 64-bit hashes of (state, turns left): the table's key and the check stored with the entry."""
    return (_hash(owner, armies, mover, phase, attacks, turns, 14695981039346656037, 1099511628211),
            _hash(owner, armies, mover, phase, attacks, turns, 7809847782465536322, 1099511628211 * 3 + 2))


@njit(cache=True)
def _home(key, mask) -> int:
    """A key's first slot: its bits mixed (FNV's low bits alone cluster), then masked."""
    h = np.uint64(key)
    h = (h ^ (h >> np.uint64(32))) * np.uint64(0x9E3779B97F4A7C15)
    return np.int64((h ^ (h >> np.uint64(29))) & np.uint64(mask))


@njit(cache=True)
def lookup(table, owner, armies, mover, phase, attacks, turns, n_players):
    """(key, check, found, value, size): a stored subtree's value and size, if the table holds this state."""
    key, check = _keys(owner, armies, mover, phase, attacks, turns)
    slots, counts = table[0], table[1][0]
    mask = slots.shape[0] - 1
    home = _home(key, mask)
    for k in range(counts[LONGEST]):
        j = (home + k) & mask
        if slots[j, SIZE] == 0:
            break
        if slots[j, KEY] == key and slots[j, CHECK] == check:
            return key, check, True, slots[j, VALUE:].view(np.float64).copy(), slots[j, SIZE]
    return key, check, False, np.zeros(n_players), np.int64(0)


@njit(cache=True)
def _place(slots, counts, key, check, bits, size):
    """Write an entry into the first free slot from its home on. A table at its bound looks at `PROBES` slots
    only and, when they are all taken, writes over the smallest subtree among them."""
    mask = slots.shape[0] - 1
    bounded = slots.shape[0] >= counts[LIMIT]
    home = _home(key, mask)
    victim, victim_size, k = -1, np.int64(-1), 0
    while True:
        j = (home + k) & mask
        if slots[j, SIZE] == 0:
            victim = j
            counts[USED] += 1
            counts[LONGEST] = max(counts[LONGEST], k + 1)
            break
        if slots[j, KEY] == key and slots[j, CHECK] == check:
            return
        if victim < 0 or slots[j, SIZE] < victim_size:
            victim, victim_size = j, slots[j, SIZE]
        k += 1
        if bounded and k == PROBES:
            counts[REPLACED] += 1
            counts[LONGEST] = max(counts[LONGEST], PROBES)
            break
    slots[victim, SIZE], slots[victim, KEY], slots[victim, CHECK] = size, key, check
    slots[victim, VALUE:] = bits


@njit(cache=True)
def store(table, key, check, value, size):
    """Keep a searched subtree. Below its bound the table doubles once it is half full (so a free slot is always
    near); at the bound it fills up and then replaces."""
    slots, counts = table[0], table[1][0]
    counts[STORED] += 1
    if 2 * (counts[USED] + 1) > slots.shape[0] and slots.shape[0] < counts[LIMIT]:
        bigger = np.zeros((2 * slots.shape[0], slots.shape[1]), dtype=np.int64)
        counts[USED], counts[LONGEST] = 0, 0
        for j in range(slots.shape[0]):
            if slots[j, SIZE] > 0:
                _place(bigger, counts, slots[j, KEY], slots[j, CHECK], slots[j, VALUE:], slots[j, SIZE])
        table[0] = slots = bigger
    _place(slots, counts, key, check, value.view(np.int64), size)
