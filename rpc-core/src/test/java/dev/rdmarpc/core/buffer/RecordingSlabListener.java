package dev.rdmarpc.core.buffer;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Remembers every slab a pool told it of, added and removed, from any thread. */
final class RecordingSlabListener implements SlabListener {
    final List<Slab> added = new CopyOnWriteArrayList<>();
    final List<Slab> removed = new CopyOnWriteArrayList<>();

    @Override
    public void onSlabAdded(Slab slab) {
        added.add(slab);
    }

    @Override
    public void onSlabRemoved(Slab slab) {
        removed.add(slab);
    }

    /** Slabs added and not removed since. */
    int registered() {
        return added.size() - removed.size();
    }
}
