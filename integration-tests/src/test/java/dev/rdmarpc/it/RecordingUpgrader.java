package dev.rdmarpc.it;

import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.spi.ConnectionUpgrader;
import dev.rdmarpc.core.spi.FrameConnection;
import dev.rdmarpc.core.spi.FrameHandler;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A connection upgrader that never upgrades (found through META-INF/services, inert unless {@link #enabled}): it
 * records every offer core asks it for, with whether the connection was a completed TLS session at that moment,
 * and offers a capability so that the server side is asked too.
 */
public final class RecordingUpgrader implements ConnectionUpgrader {
    /** A capability id no real upgrader uses. */
    static final int CAPABILITY_ID = 0x7e58;
    static volatile boolean enabled;
    static final List<Prepared> PREPARED = new CopyOnWriteArrayList<>();

    /** One {@link #prepare} call. */
    record Prepared(boolean clientSide, boolean underTls) {
    }

    @Override
    public String name() {
        return "recording";
    }

    @Override
    public int capabilityId() {
        return CAPABILITY_ID;
    }

    @Override
    public Offer prepare(FrameConnection base, SlabPool pool, boolean clientSide) {
        if (!enabled) {
            return null;
        }
        PREPARED.add(new Prepared(clientSide, base.sslSession() != null));
        return new Offer() {
            @Override
            public byte[] capability() {
                return new byte[]{1};
            }

            @Override
            public FrameConnection complete(byte[] peerCapability, FrameHandler handler) throws Exception {
                throw new Exception("the recording upgrader never upgrades");
            }

            @Override
            public void abandon() {
            }
        };
    }
}
