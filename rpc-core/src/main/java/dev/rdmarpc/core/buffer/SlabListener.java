package dev.rdmarpc.core.buffer;

/**
 * Told of every slab a pool creates and frees, so a transport can register each one once. Calls come
 * from the thread that made the pool grow, or from the thread that trims it (a caller of
 * {@link SlabPool#trim()} or the pool's daemon timer), under the pool's locks: a listener must not
 * allocate or release buffers of the pool it listens to.
 */
public interface SlabListener {
    /** A slab was created (or existed when the listener was added). Runs before any buffer of it is handed out. */
    void onSlabAdded(Slab slab);

    /** A slab is about to be freed; no buffer of it is in use or cached by a thread. */
    void onSlabRemoved(Slab slab);
}
