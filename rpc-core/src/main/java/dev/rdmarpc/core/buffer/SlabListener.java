package dev.rdmarpc.core.buffer;

/** Told of every slab a pool creates and frees, so a transport can register each one once. */
public interface SlabListener {
    /** A slab was created (or existed when the listener was added). Runs before any buffer of it is handed out. */
    void onSlabAdded(Slab slab);

    /** A slab is about to be freed; no buffer of it is in use. */
    void onSlabRemoved(Slab slab);
}
