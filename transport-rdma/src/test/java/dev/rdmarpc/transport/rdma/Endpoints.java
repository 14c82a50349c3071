package dev.rdmarpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.Collection;
import java.util.List;

/** Finds the two ends of one RDMA connection among a device context's endpoints (both ends live in the test's JVM). */
final class Endpoints {
    private Endpoints() {
    }

    /** The one endpoint not in {@code known} whose peer listens on {@code serverPort}: a new connection's client end. */
    static RdmaEndpoint newClientEnd(List<RdmaEndpoint> all, Collection<RdmaEndpoint> known, int serverPort) {
        RdmaEndpoint found = null;
        for (RdmaEndpoint ep : all) {
            if (!known.contains(ep) && ep.remoteAddress() instanceof InetSocketAddress a && a.getPort() == serverPort) {
                assertTrue(found == null, "one new client endpoint");
                found = ep;
            }
        }
        assertNotNull(found, () -> "the new client endpoint among " + all);
        return found;
    }

    /** The other end of {@code clientEnd}'s connection: the endpoint whose peer address is its local address. */
    static RdmaEndpoint serverEndOf(RdmaEndpoint clientEnd, List<RdmaEndpoint> all) {
        for (RdmaEndpoint ep : all) {
            if (ep != clientEnd && clientEnd.localAddress().equals(ep.remoteAddress())) {
                return ep;
            }
        }
        throw new AssertionError("no server endpoint for " + clientEnd + " among " + all);
    }
}
