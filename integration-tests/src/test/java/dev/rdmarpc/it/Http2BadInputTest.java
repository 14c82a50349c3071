package dev.rdmarpc.it;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.testing.Await;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NegotiationType;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Hostile HTTP/2 clients on an rdmarpc server's port: each closes (or is refused on) only its own connection, through
 * the HTTP/2 codec's own protections and the server's keepalive enforcement; the server, a stock gRPC client and an
 * rdmarpc client on other connections carry on, and no slab buffer leaks.
 */
class Http2BadInputTest {
    private static final int ENHANCE_YOUR_CALM = 0xb;
    private static final int WINDOW_UPDATE = 0x8;
    /** grpc's keepalive enforcement tolerates 2 strikes. */
    private static final int MAX_PING_STRIKES = 2;
    private static final int FLOW_CONTROL_ERROR = 0x3;
    private static final int PROTOCOL_ERROR = 0x1;

    private long baseline;
    private RpcServer server;
    private ManagedChannel grpc;
    private RpcChannel rdmarpc;

    @BeforeEach
    void start() throws Exception {
        baseline = SlabPool.shared().inUseBuffers();
        server = RpcServer.forPort(0).addService(new TestService().definition()).build().start();
        grpc = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).negotiationType(NegotiationType.PLAINTEXT).build();
        rdmarpc = RpcChannel.forAddress("127.0.0.1", server.getPort()).build();
        assertArrayEquals(new byte[] {1}, StockGrpc.echo(grpc, new byte[] {1}));
    }

    @AfterEach
    void othersCarryOn() throws Exception {
        try {
            byte[] a = Bytes.pattern(5000, 7);
            assertArrayEquals(a, StockGrpc.echo(grpc, a), "a well-behaved HTTP/2 client on its own connection is still served");
            assertArrayEquals(a, ClientCalls.blockingUnaryCall(rdmarpc, TestService.ECHO, CallOptions.DEFAULT, a),
                    "an rdmarpc client is still served");
            Await.until(() -> server.connectionCount() == 2, () -> "only the bad connection was closed: " + server.connectionCount());
        } finally {
            grpc.shutdownNow();
            rdmarpc.shutdownNow();
            grpc.awaitTermination(60, TimeUnit.SECONDS);
            server.shutdownNow();
            server.awaitTermination(60, TimeUnit.SECONDS);
        }
        Await.until(() -> SlabPool.shared().inUseBuffers() == baseline, () -> "slab buffers in use back to " + baseline
                + ", not " + SlabPool.shared().inUseBuffers() + ":\n" + SlabPool.shared().describeLiveBuffers());
    }

    /**
     * Reads until the server closes the connection, and checks that it ended it with GOAWAY {@code error} (and
     * {@code debug} when not null). A server that closes while the client's flood is still arriving resets the
     * connection, and the reset may discard its GOAWAY before it is read: then the reset is the answer.
     */
    private static void assertEndedWith(RawH2Client c, int error, String debug) throws IOException {
        List<RawH2Client.Frame> frames = c.framesUntilClosed();
        java.util.Optional<RawH2Client.Frame> g = frames.stream().filter(f -> f.type() == RawH2Client.GOAWAY).findFirst();
        if (g.isEmpty()) {
            assertTrue(c.resetByServer, "the server ended the connection with neither GOAWAY nor a reset: " + frames);
            return;
        }
        assertEquals(error, g.get().goAwayError(), frames.toString());
        if (debug != null) {
            assertEquals(debug, g.get().goAwayDebug());
        }
    }

    @Test
    void rapidResetEndsTheConnection() throws IOException {
        try (RawH2Client c = new RawH2Client(server.getPort())) {
            try {
                for (int id = 1; id < 2 * 1000; id += 2) {
                    c.headers(id, RawH2Client.request("Echo"), false).frame(RawH2Client.RST_STREAM, id, 0, new byte[] {0, 0, 0, 8});
                    if (id % 100 == 1) {
                        c.flush();
                    }
                }
                c.flush();
            } catch (IOException closedMeanwhile) {
                // the server closed the connection while the flood was being written
            }
            assertEndedWith(c, ENHANCE_YOUR_CALM, null);
        }
    }

    @Test
    void aContinuationFloodEndsTheConnection() throws IOException {
        try (RawH2Client c = new RawH2Client(server.getPort())) {
            try {
                c.frame(RawH2Client.HEADERS, 1, 0, new byte[] {(byte) 0x83}); // :method POST, no END_HEADERS
                for (int i = 0; i < 10_000; i++) {
                    c.frame(RawH2Client.CONTINUATION, 1, 0, new byte[] {0x40, 1, 'x', 1, 'y'});
                }
                c.flush();
            } catch (IOException closedMeanwhile) {
                // closed while the flood was being written
            }
            assertEndedWith(c, ENHANCE_YOUR_CALM, null);
        }
    }

    @Test
    void aPingFloodIsTooManyPings() throws IOException {
        try (RawH2Client c = new RawH2Client(server.getPort())) {
            try {
                for (int i = 0; i < 100; i++) {
                    c.frame(RawH2Client.PING, 0, 0, new byte[8]);
                }
                c.flush();
            } catch (IOException closedMeanwhile) {
                // closed while the flood was being written
            }
            assertEndedWith(c, ENHANCE_YOUR_CALM, "too_many_pings");
        }
    }

    @Test
    void bdpPingsWhileResponseDataArrivesAreNoStrikes() throws IOException {
        try (RawH2Client c = new RawH2Client(server.getPort())) {
            // Stream: 4 messages of 256 KiB, sent as the client's 64 KiB windows allow. Like grpc-java's BDP pings, the
            // client PINGs on reading DATA when no PING of its own is unanswered: each PING follows a DATA frame the
            // server wrote after answering the one before, which is what resets the strikes
            byte[] request = {0, 0, 0, 0, 8, 0, 0, 0, 4, 0, 4, 0, 0};
            c.headers(1, RawH2Client.request("Stream"), false).frame(RawH2Client.DATA, 1, 1, request).flush();
            int pings = 0;
            boolean outstanding = false;
            while (true) {
                List<RawH2Client.Frame> next = c.framesUntil(f -> true);
                assertFalse(next.isEmpty(), "the server closed the connection");
                RawH2Client.Frame f = next.getFirst();
                assertTrue(f.type() != RawH2Client.GOAWAY, () -> "GOAWAY: " + f.goAwayDebug());
                if (f.type() == RawH2Client.HEADERS && (f.flags() & 1) != 0) {
                    break; // the trailers
                }
                if (f.type() == RawH2Client.PING && (f.flags() & 1) != 0) {
                    outstanding = false;
                } else if (f.type() == RawH2Client.DATA && f.payload().length > 0) {
                    byte[] increment = ByteBuffer.allocate(4).putInt(f.payload().length).array();
                    c.frame(WINDOW_UPDATE, 0, 0, increment).frame(WINDOW_UPDATE, 1, 0, increment);
                    if (!outstanding) {
                        c.frame(RawH2Client.PING, 0, 0, new byte[8]);
                        outstanding = true;
                        pings++;
                    }
                    c.flush();
                }
            }
            assertTrue(pings > MAX_PING_STRIKES + 1, "enough PINGs to be too many if they were strikes: " + pings);
        }
    }

    @Test
    void aSettingsFloodFromAClientThatDoesNotReadEndsTheConnection() throws IOException {
        try (RawH2Client c = new RawH2Client(server.getPort())) {
            byte[] settings = {0, 0, 0, RawH2Client.SETTINGS, 0, 0, 0, 0, 0};
            byte[] batch = new byte[settings.length * 10_000];
            for (int i = 0; i < 10_000; i++) {
                System.arraycopy(settings, 0, batch, i * settings.length, settings.length);
            }
            IOException closed = assertThrows(IOException.class, () -> {
                for (int i = 0; i < 10_000; i++) { // at most 100 million frames: a bound for a broken server only
                    c.socket.getOutputStream().write(batch);
                }
            }, "the server ends the connection once its unread answers pile up");
            assertTrue(closed.getMessage() != null, String.valueOf(closed));
        }
    }

    @Test
    void aHeaderListFarOverTheLimitIsRefused() throws IOException {
        try (RawH2Client c = new RawH2Client(server.getPort())) {
            try {
                c.headers(1, RawH2Client.request("Echo").add("x-big", "v".repeat(64 * 1024)), true).flush();
            } catch (IOException closedMeanwhile) {
                // the server ended the connection while the header block was being written
            }
            List<RawH2Client.Frame> frames = c.framesUntil(f -> f.type() == RawH2Client.GOAWAY
                    || f.type() == RawH2Client.RST_STREAM && f.streamId() == 1);
            assertTrue(frames.stream().noneMatch(f -> f.type() == RawH2Client.DATA), "the call was not served: " + frames);
            RawH2Client.Frame last = frames.isEmpty() ? null : frames.get(frames.size() - 1);
            assertTrue(last == null ? c.resetByServer : last.type() == RawH2Client.GOAWAY || last.type() == RawH2Client.RST_STREAM
                    || c.resetByServer, "the stream was refused or the connection ended: " + frames);
        }
    }

    @Test
    void metadataOverTheServersLimitButWithinTheCodecsIsResourceExhausted() {
        Metadata md = new Metadata();
        md.put(Metadata.Key.of("x-big", Metadata.ASCII_STRING_MARSHALLER), "v".repeat(9 * 1024));
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                () -> StockGrpc.echo(io.grpc.ClientInterceptors.intercept(grpc, MetadataUtils.newAttachHeadersInterceptor(md)), new byte[1]));
        assertEquals(io.grpc.Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode(), e.getStatus().toString());
    }

    @Test
    void aConnectionWindowOverflowEndsTheConnection() throws IOException {
        try (RawH2Client c = new RawH2Client(server.getPort())) {
            byte[] max = {0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff};
            c.frame(0x8, 0, 0, max).frame(0x8, 0, 0, max).flush();
            assertEndedWith(c, FLOW_CONTROL_ERROR, null);
        }
    }

    @Test
    void dataOnAStreamNeverOpenedEndsTheConnection() throws IOException {
        try (RawH2Client c = new RawH2Client(server.getPort())) {
            c.frame(RawH2Client.DATA, 99, 0, new byte[] {0, 0, 0, 0, 1, 42}).flush();
            assertEndedWith(c, PROTOCOL_ERROR, null);
        }
    }

    @Test
    void dataOnAStreamThatHasEndedIsDroppedAndTheConnectionCarriesOn() throws IOException {
        try (RawH2Client c = new RawH2Client(server.getPort())) {
            byte[] message = {0, 0, 0, 0, 1, 42};
            c.headers(1, RawH2Client.request("Echo"), true).frame(RawH2Client.DATA, 1, 0, message)
                    .headers(3, RawH2Client.request("Echo"), false).frame(RawH2Client.DATA, 3, 1, message).flush();
            List<RawH2Client.Frame> frames = c.framesUntil(f -> f.type() == RawH2Client.GOAWAY
                    || f.type() == RawH2Client.HEADERS && f.streamId() == 3 && (f.flags() & 1) != 0);
            RawH2Client.Frame last = frames.get(frames.size() - 1);
            assertEquals(RawH2Client.HEADERS, last.type(), "the next call on the connection is answered: " + frames);
            assertTrue(frames.stream().anyMatch(f -> f.type() == RawH2Client.DATA && f.streamId() == 3
                    && java.util.Arrays.equals(f.payload(), message)), "its echo came back: " + frames);
        }
    }
}
