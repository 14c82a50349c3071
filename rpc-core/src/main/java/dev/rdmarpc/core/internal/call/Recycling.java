package dev.rdmarpc.core.internal.call;

/**
 * When one stream object may serve its owner's next call: the whole of stream recycling, opt in. A stream has one
 * only when it took an allow-listed path (a generated stub's async unary call, the channel's unary entry, {@code ChannelImpl.startPooledUnary}; a
 * server call whose handler is core's single-request one, unwrapped, {@link ServerStream}); a stream without one is
 * never recycled. A call on such a stream must also take every {@link #allow step} the owner requires (for a client
 * call: opened on the caller's thread, ended by the server's TRAILERS), and is recycled only once each of its
 * {@code parties} (its starter or response observer, its drain, its leaving the connection's table) said it is
 * {@link #done} with it: exactly one of them is told to recycle it. Each recycling starts a new {@link #generation},
 * which a late timer names to find it serves another call by then. Guarded by the owning stream's lock.
 */
final class Recycling {
    private final int requiredSteps;
    private final int allParties;
    private int steps;
    private int parties;
    private int generation;

    /**
     * Recycling for a stream whose calls must take every step of {@code requiredSteps} (bits; 0 for none) and be let
     * go by {@code partyCount} parties (numbered from 0).
     */
    Recycling(int requiredSteps, int partyCount) {
        this.requiredSteps = requiredSteps;
        this.allParties = (1 << partyCount) - 1;
    }

    /** With the lock held: the call took the allow-listed step {@code step} (a bit of the required steps). */
    void allow(int step) {
        steps |= step;
    }

    /**
     * With the lock held: {@code party} (its number) is done with the call; true for exactly one caller, the last
     * party of a call that took every required step, which must then recycle the stream once it released the lock.
     */
    boolean done(int party) {
        parties |= 1 << party;
        if (parties != allParties || (steps & requiredSteps) != requiredSteps) {
            return false;
        }
        parties = 0;
        steps = 0;
        generation++;
        return true;
    }

    /** With the lock held: the call the stream serves now, for a timer to name (see {@link #isGeneration}). */
    int generation() {
        return generation;
    }

    /** With the lock held: whether {@code g}, from {@link #generation}, is still the call the stream serves. */
    boolean isGeneration(int g) {
        return generation == g;
    }
}
