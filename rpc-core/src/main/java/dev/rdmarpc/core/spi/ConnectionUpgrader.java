package dev.rdmarpc.core.spi;

import dev.rdmarpc.core.buffer.SlabPool;

/**
 * Moves a connection's frames onto a faster path after the HELLO exchange (the RDMA transport),
 * found with {@link java.util.ServiceLoader}. The original connection stays open as liveness:
 * its loss closes the upgraded one.
 */
public interface ConnectionUpgrader {
    /** "rdma". */
    String name();

    /** The HELLO capability id this upgrader fills and reads. */
    int capabilityId();

    /**
     * Prepares an offer for a new connection, or returns null when this side cannot upgrade
     * (no device, no active port, memlock too low …; the upgrader logs the reason once and
     * counts it).
     */
    Offer prepare(FrameConnection base, SlabPool pool, boolean clientSide);

    /**
     * Publishes this upgrader's meters on a Micrometer {@code MeterRegistry} (typed Object so core
     * loads without Micrometer). Called whenever a server or channel is built with a registry; must
     * be idempotent. Does nothing by default.
     */
    default void bindMeters(Object meterRegistry) {
    }

    /**
     * This upgrader for connections of a channel or server built with an explicit RDMA device choice; upgraders
     * without devices return themselves (the default).
     */
    default ConnectionUpgrader withDevice(dev.rdmarpc.core.RdmaDeviceChoice device) {
        return this;
    }

    /**
     * Drops the registrations this transport keeps cached for memory overlapping {@code memory} (see
     * {@link dev.rdmarpc.core.Attachment#invalidateRegistrations}); returns how many of them sends in flight still
     * hold (each goes when its send releases it). Does nothing by default.
     */
    default int invalidateRegistrations(java.lang.foreign.MemorySegment memory) {
        return 0;
    }

    /** One connection's pending upgrade. */
    interface Offer {
        /** The capability bytes to put in this side's HELLO. */
        byte[] capability();

        /**
         * Brings the upgraded connection up with the peer's capability bytes; frames read from it
         * go to {@code handler}. Server side, this runs before the server's HELLO is sent back.
         *
         * @throws Exception when the peer's parameters are impossible (a {@code ProtocolException}: the connection
         *                   closes) or a transition fails. On the server the connection then stays on the base
         *                   connection and its HELLO offers nothing; on the client, whose server has already moved,
         *                   the connection is closed and the next one is opened without offering the upgrade. In
         *                   forced-RDMA mode the connection fails instead.
         */
        FrameConnection complete(byte[] peerCapability, FrameHandler handler) throws Exception;

        /** Frees what {@link ConnectionUpgrader#prepare} reserved when the upgrade does not happen. */
        void abandon();
    }
}
