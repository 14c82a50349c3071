package dev.rdmarpc.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.PeerConnection;
import dev.rdmarpc.core.PeerConnectionListener;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.TransportMode;
import dev.rdmarpc.core.buffer.SlabPool;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The HELLO upgrade, driven over real TCP by {@link PairedPathUpgrader}: a completed upgrade carries the calls on the
 * new path, and a client whose transition fails after the server has moved closes that connection and opens the
 * next one without offering the upgrade, so both sides agree on TCP.
 */
class ConnectionUpgradeTest {
    private final BlockingQueue<PeerConnection> opened = new LinkedBlockingQueue<>();
    private final BlockingQueue<PeerConnection> closed = new LinkedBlockingQueue<>();
    private TestService service;
    private RpcServer server;
    private RpcChannel channel;
    private long baseline;

    @BeforeEach
    void startServer() throws Exception {
        baseline = SlabPool.shared().inUseBuffers();
        service = new TestService();
        server = RpcServer.forPort(0).addService(service.definition()).connectionListener(new PeerConnectionListener() {
            @Override
            public void connectionOpened(PeerConnection connection) {
                opened.add(connection);
            }

            @Override
            public void connectionClosed(PeerConnection connection, String reason) {
                closed.add(connection);
            }
        }).build().start();
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow();
            channel.awaitTermination(5, TimeUnit.SECONDS);
        }
        server.shutdownNow();
        server.awaitTermination(5, TimeUnit.SECONDS);
        PairedPathUpgrader.disable(server.getPort());
        LoopbackTest.assertSlabsBackToBaseline(baseline);
    }

    private byte[] echo(byte[] request) throws StatusException {
        return ClientCalls.blockingUnaryCall(channel, TestService.ECHO, CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), request);
    }

    private PeerConnection nextOpened() throws InterruptedException {
        PeerConnection c = opened.poll(30, TimeUnit.SECONDS);
        assertNotNull(c, "the server reported a connection");
        return c;
    }

    @Test
    void completedUpgradeCarriesTheCallsOnTheNewPath() throws Exception {
        PairedPathUpgrader.enable(server.getPort(), PairedPathUpgrader.Scenario.UPGRADE);
        channel = RpcChannel.forAddress("127.0.0.1", server.getPort()).build();
        byte[] big = new byte[300_000]; // several MESSAGE frames each way
        big[12345] = 7;
        assertArrayEquals(big, echo(big));
        assertEquals(PairedPath.TRANSPORT, channel.currentTransport());
        assertEquals(PairedPath.TRANSPORT, nextOpened().transportName());
        assertEquals(0, PairedPathUpgrader.clientFailures(server.getPort()));
    }

    @Test
    void clientTransitionFailingAfterTheServerMovedReconnectsOverTcp() throws Exception {
        PairedPathUpgrader.enable(server.getPort(), PairedPathUpgrader.Scenario.CLIENT_TRANSITION_FAILS);
        channel = RpcChannel.forAddress("127.0.0.1", server.getPort()).build();

        assertArrayEquals(new byte[] {1, 2, 3}, echo(new byte[] {1, 2, 3}));

        assertEquals(1, PairedPathUpgrader.clientFailures(server.getPort()), "the client's transition was attempted once");
        assertEquals("tcp", channel.currentTransport());
        PeerConnection first = nextOpened();
        assertEquals(PairedPath.TRANSPORT, first.transportName(), "the server had moved to the path");
        PeerConnection closedOne = closed.poll(30, TimeUnit.SECONDS);
        assertEquals(first, closedOne, "the server's moved connection was closed");
        PeerConnection second = nextOpened();
        assertEquals("tcp", second.transportName(), "the next connection did not offer the upgrade");
        assertArrayEquals(new byte[] {4}, echo(new byte[] {4}));
        assertEquals(1, PairedPathUpgrader.clientFailures(server.getPort()));
        assertTrue(closed.isEmpty() && opened.isEmpty(), "later calls use the same TCP connection");
    }

    @Test
    void clientThatRequiresTheUpgradeFailsItsCallWhenTheTransitionFails() throws Exception {
        PairedPathUpgrader.enable(server.getPort(), PairedPathUpgrader.Scenario.CLIENT_TRANSITION_FAILS);
        channel = RpcChannel.forAddress("127.0.0.1", server.getPort()).transportMode(TransportMode.RDMA).build();

        StatusException e = assertThrows(StatusException.class, () -> echo(new byte[] {1}));

        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
        String description = e.getStatus().getDescription();
        assertTrue(description.contains("RDMA transport was required but is not possible")
                && description.contains("failed (simulated)"), description);
        PeerConnection first = nextOpened();
        assertEquals(first, closed.poll(30, TimeUnit.SECONDS), "the server's side of it was closed too");
    }
}
