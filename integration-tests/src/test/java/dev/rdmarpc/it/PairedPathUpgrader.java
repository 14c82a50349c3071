package dev.rdmarpc.it;

import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.spi.ConnectionUpgrader;
import dev.rdmarpc.core.spi.FrameConnection;
import dev.rdmarpc.core.spi.FrameHandler;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test {@link ConnectionUpgrader} (registered in this module's test {@code META-INF/services}) that moves connections
 * to the servers a test names onto a {@link PairedPath}, the way the RDMA upgrader moves them onto a queue pair. It
 * offers nothing for any other server, so other tests stay on TCP.
 */
public final class PairedPathUpgrader implements ConnectionUpgrader {
    /** A capability id no real upgrader uses. */
    static final int CAPABILITY_ID = 0x7e57;

    /** What happens on connections to one server. */
    enum Scenario {
        /** Both sides move to the path. */
        UPGRADE,
        /** The server moves; the client's transition then fails (after the server's HELLO). */
        CLIENT_TRANSITION_FAILS
    }

    private static final Map<Integer, Scenario> SCENARIOS = new ConcurrentHashMap<>();
    private static final Map<Integer, AtomicInteger> CLIENT_FAILURES = new ConcurrentHashMap<>();

    /** Upgrades connections to the server on {@code port} as {@code scenario} says. */
    static void enable(int port, Scenario scenario) {
        CLIENT_FAILURES.put(port, new AtomicInteger());
        SCENARIOS.put(port, scenario);
    }

    /** Stops upgrading connections to the server on {@code port}. */
    static void disable(int port) {
        SCENARIOS.remove(port);
        CLIENT_FAILURES.remove(port);
    }

    /** How many client-side transitions failed on connections to the server on {@code port}. */
    static int clientFailures(int port) {
        AtomicInteger n = CLIENT_FAILURES.get(port);
        return n == null ? 0 : n.get();
    }

    @Override
    public String name() {
        return "paired-path";
    }

    @Override
    public int capabilityId() {
        return CAPABILITY_ID;
    }

    @Override
    public Offer prepare(FrameConnection base, SlabPool pool, boolean clientSide) {
        int serverPort = port(clientSide ? base.remoteAddress() : base.localAddress());
        Scenario scenario = SCENARIOS.get(serverPort);
        if (scenario == null) {
            return null;
        }
        PairedPath end = PairedPath.create(base);
        boolean failTransition = clientSide && scenario == Scenario.CLIENT_TRANSITION_FAILS;
        return new Offer() {
            private boolean completed;

            @Override
            public byte[] capability() {
                return ByteBuffer.allocate(Long.BYTES).order(ByteOrder.LITTLE_ENDIAN).putLong(end.id).array();
            }

            @Override
            public FrameConnection complete(byte[] peerCapability, FrameHandler handler) throws IOException {
                if (failTransition) {
                    CLIENT_FAILURES.get(serverPort).incrementAndGet();
                    throw new IOException("moving the client's end of the path to RTR failed (simulated)");
                }
                end.connect(ByteBuffer.wrap(peerCapability).order(ByteOrder.LITTLE_ENDIAN).getLong(), handler);
                completed = true;
                return end;
            }

            @Override
            public void abandon() {
                if (!completed) {
                    end.discard();
                }
            }
        };
    }

    private static int port(SocketAddress address) {
        return address instanceof InetSocketAddress inet ? inet.getPort() : -1;
    }
}
