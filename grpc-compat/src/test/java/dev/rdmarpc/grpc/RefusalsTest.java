package dev.rdmarpc.grpc;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCall;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.TransportMode;
import io.grpc.internal.ClientStreamListener.RpcProgress;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Pins the wording of rdmarpc core's statuses that {@link Refusals} relies on to tell grpc a call
 * never left the client: if core rewords them, this fails instead of grpc silently losing its
 * transparent retries.
 */
class RefusalsTest {
    static final MethodDescriptor<InputStream, InputStream> METHOD = MethodDescriptor.create("test.Refusals/Call",
            MethodDescriptor.MethodType.UNARY, StreamMarshaller.INSTANCE, StreamMarshaller.INSTANCE);

    @Test
    void connectFailureCountsAsNeverSent() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        RpcChannel channel = RpcChannel.forAddress("127.0.0.1", port).transportMode(TransportMode.TCP).build();
        try {
            Status s = call(channel);
            assertEquals(Status.Code.UNAVAILABLE, s.getCode(), s.toString());
            assertTrue(Refusals.neverSent(s), "core's wording changed: " + s);
        } finally {
            channel.shutdownNow();
        }
    }

    @Test
    void shutDownChannelCountsAsNeverSent() throws Exception {
        RpcChannel channel = RpcChannel.forAddress("127.0.0.1", 9).transportMode(TransportMode.TCP).build();
        channel.shutdown();
        Status s = call(channel);
        assertEquals(Status.Code.UNAVAILABLE, s.getCode(), s.toString());
        assertTrue(Refusals.neverSent(s), "core's wording changed: " + s);
    }

    @Test
    void otherStatusesDoNot() {
        assertFalse(Refusals.neverSent(Status.UNAVAILABLE.withDescription("connection to 127.0.0.1:1: connection reset")));
        assertFalse(Refusals.neverSent(Status.DEADLINE_EXCEEDED.withDescription("cannot connect to x")));
        assertFalse(Refusals.neverSent(Status.UNAVAILABLE));
        assertTrue(Refusals.neverSent(Status.UNAVAILABLE.withDescription("server /127.0.0.1:5 is going away: server is shutting down")));
        assertTrue(Refusals.neverSent(Status.UNAVAILABLE.withDescription("no connection to h:1 accepts new calls")));
        assertTrue(Refusals.neverSent(Status.UNAVAILABLE.withDescription("server is shutting down")),
                "a stream refused at its HEADERS by a server going away");
        assertFalse(Refusals.neverSent(Status.UNAVAILABLE.withDescription("server is shutting down now")),
                "shutdownNow aborts calls the application may have seen");
    }

    @Test
    void aCallThatNeverLeftIsMiscarriedAndOneTheServerRefusedIsRefused() {
        assertEquals(RpcProgress.MISCARRIED, Refusals.progress(Status.UNAVAILABLE.withDescription("no connection to h:1 accepts new calls")));
        assertEquals(RpcProgress.MISCARRIED, Refusals.progress(Status.UNAVAILABLE.withDescription("channel to h:1 is shut down")));
        assertEquals(RpcProgress.REFUSED, Refusals.progress(
                Status.UNAVAILABLE.withDescription("server /127.0.0.1:5 is going away: server is shutting down")));
        assertEquals(RpcProgress.REFUSED, Refusals.progress(Status.UNAVAILABLE.withDescription("server is shutting down")));
        assertEquals(RpcProgress.PROCESSED, Refusals.progress(Status.UNAVAILABLE.withDescription("server is shutting down now")));
    }

    @Test
    void aStreamRefusedOverTheServersConcurrentStreamLimitIsRefused() {
        // core's server wording (integration-tests' LimitsTest pins it on the wire)
        Status refused = Status.UNAVAILABLE.withDescription(
                "server refused the stream: too many concurrent streams on this connection (3 open, the server's limit is 3)");
        assertTrue(Refusals.neverSent(refused));
        assertEquals(RpcProgress.REFUSED, Refusals.progress(refused), "grpc retries it once, transparently");
        assertFalse(Refusals.neverSent(Status.RESOURCE_EXHAUSTED.withDescription("server memory budget exhausted: 1 bytes")),
                "the memory budget's refusal is not retried transparently");
    }

    private static Status call(RpcChannel channel) throws Exception {
        CompletableFuture<Status> closed = new CompletableFuture<>();
        ClientCall<InputStream, InputStream> c = channel.newCall(METHOD, CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS));
        c.start(new ClientCall.Listener<>() {
            @Override
            public void onClose(Status status, Metadata trailers) {
                closed.complete(status);
            }
        }, new Metadata());
        c.sendMessage(new ByteArrayInputStream(new byte[1]));
        c.halfClose();
        c.request(1);
        return closed.get(60, TimeUnit.SECONDS);
    }
}
