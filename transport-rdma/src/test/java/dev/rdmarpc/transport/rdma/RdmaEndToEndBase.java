package dev.rdmarpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.TransportMode;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * A server and channels through rdmarpc's public API over the RDMA transport, in one JVM (both sides share the
 * device context: one CQ, one SRQ). Every test must leave slab buffers, memory regions, windows and queue pairs as
 * it found them ({@link RdmaTests.Baseline}), and no attachment registration behind.
 */
abstract class RdmaEndToEndBase {
    static final int MAX_MESSAGE = 80 << 20;

    final EchoService service = new EchoService();
    final List<RpcChannel> channels = new ArrayList<>();
    RpcServer server;
    RdmaTests.Baseline baseline;

    @BeforeAll
    static void openDevice() {
        RdmaTests.context();
    }

    @BeforeEach
    void captureBaseline() {
        PeerFallbacks.PROCESS.clear(); // a path fault of an earlier test must not keep this one's connections on TCP
        RdmaTests.await(10_000, () -> RdmaMetrics.snapshot().connections() == 0, () -> "connections of an earlier test");
        baseline = RdmaTests.Baseline.now();
    }

    @AfterEach
    void closeAndCheckBaseline() throws InterruptedException {
        for (RpcChannel c : channels) {
            c.shutdownNow();
        }
        for (RpcChannel c : channels) {
            c.awaitTermination(RdmaTests.timeout(30_000), TimeUnit.MILLISECONDS);
        }
        if (server != null) {
            server.shutdownNow();
            server.awaitTermination(RdmaTests.timeout(30_000), TimeUnit.MILLISECONDS);
        }
        baseline.await();
        awaitAttachmentRegistrationsDropped();
    }

    /**
     * After a test, whose attachments' memory is closed by then: every device's cache of attachment registrations drops
     * the entries of closed memory (a sweep, as its next miss would do) and none is left registered.
     */
    static void awaitAttachmentRegistrationsDropped() {
        RdmaTests.await(10_000, () -> {
            DeviceContexts.all().forEach(c -> c.attachmentRegistrations().sweep());
            return RdmaMetrics.ATTACHMENT_REGIONS.get() == 0;
        }, () -> "attachment registrations of closed memory deregistered, not " + RdmaMetrics.ATTACHMENT_REGIONS.get());
    }

    RpcServer startServer(UnaryOperator<RpcServer.Builder> customize) throws IOException {
        // the handshake timeout scales like every other timeout: a child JVM opening the device in the emulated guest
        // takes tens of seconds before its HELLO
        server = customize.apply(RpcServer.forPort(0).addService(service.definition()).maxInboundMessageSize(MAX_MESSAGE)
                .handshakeTimeout(java.time.Duration.ofMillis(RdmaTests.timeout(20_000)))).build().start();
        return server;
    }

    RpcServer startServer() throws IOException {
        return startServer(b -> b);
    }

    RpcChannel channel(UnaryOperator<RpcChannel.Builder> customize) {
        RpcChannel c = customize.apply(RpcChannel.forAddress("127.0.0.1", server.getPort())
                .maxInboundMessageSize(MAX_MESSAGE).transportMode(TransportMode.RDMA)).build();
        channels.add(c);
        return c;
    }

    RpcChannel channel() {
        return channel(b -> b);
    }

    static byte[] echo(RpcChannel channel, byte[] request, long timeoutMillis) {
        return ClientCalls.blockingUnaryCall(channel, EchoService.ECHO,
                CallOptions.DEFAULT.withDeadlineAfter(RdmaTests.timeout(timeoutMillis), TimeUnit.MILLISECONDS), request);
    }

    static void assertRdma(RpcChannel channel) {
        assertEquals("rdma", channel.currentTransport(), "the channel's transport");
    }
}
