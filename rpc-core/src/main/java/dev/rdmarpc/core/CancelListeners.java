package dev.rdmarpc.core;

import java.util.ArrayList;

/** What runs when a server call is cancelled, for its {@link CallContext}: the calls made for it, to cancel them. */
final class CancelListeners {
    private static final Runnable NOTHING = () -> { };
    /** Null once fired. */
    private ArrayList<Runnable> listeners = new ArrayList<>(2);

    /** Adds {@code listener} and returns what removes it; runs it at once (returning a no-op) if already fired. */
    Runnable add(Runnable listener) {
        synchronized (this) {
            if (listeners != null) {
                listeners.add(listener);
                return () -> remove(listener);
            }
        }
        listener.run();
        return NOTHING;
    }

    private synchronized void remove(Runnable listener) {
        if (listeners != null) {
            listeners.remove(listener);
        }
    }

    /** Runs every listener added, once, outside the lock; later ones run as they are added. */
    void fire() {
        ArrayList<Runnable> fired;
        synchronized (this) {
            fired = listeners;
            listeners = null;
        }
        if (fired != null) {
            for (Runnable r : fired) {
                r.run();
            }
        }
    }
}
