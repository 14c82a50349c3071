package dev.rdmarpc.it;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCall;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.ResponseMetadata;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.WireProtocol;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A native {@link RpcChannel} calling a stock grpc-java server ({@code NettyServerBuilder}) over gRPC over HTTP/2 in
 * cleartext: every call kind, deadlines, cancellation, metadata both ways, error statuses, large messages and the
 * message size limit behave as they do against an rdmarpc server; AUTO finds the HTTP/2 server and remembers it.
 */
class GrpcServerCallsTest {
    /** A bound for a hung call only: every call here ends long before. */
    private static CallOptions options() {
        return CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS);
    }
    private long baseline;
    private StockGrpcServer server;
    private RpcChannel channel;

    @BeforeEach
    void start() throws Exception {
        baseline = SlabPool.shared().inUseBuffers();
        server = new StockGrpcServer(null, 16 << 20);
    }

    @AfterEach
    void stop() throws Exception {
        if (channel != null) {
            channel.shutdownNow();
            channel.awaitTermination(60, TimeUnit.SECONDS);
        }
        server.close();
        LoopbackTest.assertSlabsBackToBaseline(baseline);
    }

    private RpcChannel channel(WireProtocol protocol, int port) {
        channel = RpcChannel.forAddress("127.0.0.1", port).wireProtocol(protocol).build();
        return channel;
    }

    private RpcChannel channel(WireProtocol protocol) {
        return channel(protocol, server.port());
    }

    @Test
    void unaryCallsReachTheStockServerOverHttp2() {
        RpcChannel ch = channel(WireProtocol.AUTO);
        for (int i = 0; i < 20; i++) {
            byte[] request = Bytes.pattern(100 + i, i);
            assertArrayEquals(request, ClientCalls.blockingUnaryCall(ch, TestService.ECHO, options(), request));
        }
        assertEquals("h2", ch.currentTransport());
        assertEquals(1, server.connections.get());
    }

    @Test
    void serverStreaming() {
        RpcChannel ch = channel(WireProtocol.GRPC);
        byte[] request = new byte[8];
        System.arraycopy(Bytes.ofInt(200), 0, request, 0, 4);
        System.arraycopy(Bytes.ofInt(10_000), 0, request, 4, 4);
        int n = 0;
        for (Iterator<byte[]> it = ClientCalls.blockingServerStreamingCall(ch, TestService.STREAM, options(), request); it.hasNext(); n++) {
            assertArrayEquals(Bytes.pattern(10_000, n), it.next());
        }
        assertEquals(200, n);
    }

    @Test
    void clientAndBidiStreaming() throws Exception {
        RpcChannel ch = channel(WireProtocol.GRPC);
        CompletableFuture<byte[]> total = new CompletableFuture<>();
        StreamObserver<byte[]> requests = ClientCalls.asyncClientStreamingCall(ch.newCall(TestService.COUNT, options()), observer(total, null));
        for (int i = 0; i < 100; i++) {
            requests.onNext(new byte[1000 + i]);
        }
        requests.onCompleted();
        assertEquals(100 * 1000 + 99 * 100 / 2, Bytes.toInt(total.get(60, TimeUnit.SECONDS)));

        List<byte[]> answers = new ArrayList<>();
        CompletableFuture<byte[]> done = new CompletableFuture<>();
        StreamObserver<byte[]> chat = ClientCalls.asyncBidiStreamingCall(ch.newCall(TestService.CHAT, options()), observer(done, answers));
        for (int i = 0; i < 50; i++) {
            chat.onNext(Bytes.pattern(5000, i));
        }
        chat.onCompleted();
        done.get(60, TimeUnit.SECONDS);
        assertEquals(50, answers.size());
        for (int i = 0; i < 50; i++) {
            assertArrayEquals(Bytes.pattern(5000, i), answers.get(i));
        }
    }

    /** Completes {@code result} with the last message (or null) when the call ends well; collects every message into {@code all}. */
    private static StreamObserver<byte[]> observer(CompletableFuture<byte[]> result, List<byte[]> all) {
        return new StreamObserver<>() {
            private byte[] last;

            @Override
            public void onNext(byte[] value) {
                last = value;
                if (all != null) {
                    synchronized (all) {
                        all.add(value);
                    }
                }
            }

            @Override
            public void onError(Throwable t) {
                result.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                result.complete(last);
            }
        };
    }

    @Test
    void deadlineExceededReachesTheServerAsACancellation() throws Exception {
        RpcChannel ch = channel(WireProtocol.AUTO);
        // connected first, so that the deadline runs while the call is at the server, not while the channel connects
        assertArrayEquals(new byte[1], ClientCalls.blockingUnaryCall(ch, TestService.ECHO, options(), new byte[1]));
        StatusException e = assertThrows(StatusException.class, () -> ClientCalls.blockingUnaryCall(ch, TestService.HANG,
                CallOptions.DEFAULT.withDeadlineAfter(300, TimeUnit.MILLISECONDS), new byte[1]));
        assertEquals(Status.Code.DEADLINE_EXCEEDED, e.getStatus().getCode());
        assertTrue(server.hangCancelled.await(60, TimeUnit.SECONDS), "the server saw the call cancelled");
    }

    @Test
    void cancelResetsTheStream() throws Exception {
        RpcChannel ch = channel(WireProtocol.GRPC);
        ClientCall<byte[], byte[]> call = ch.newCall(TestService.HANG, options());
        CompletableFuture<Status> closed = new CompletableFuture<>();
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onClose(Status status, Metadata trailers) {
                closed.complete(status);
            }
        }, new Metadata());
        call.sendMessage(new byte[10]);
        call.halfClose();
        call.request(1);
        // the request is at the server once a call after it was answered on the same connection (streams are in order)
        assertArrayEquals(new byte[3], ClientCalls.blockingUnaryCall(ch, TestService.ECHO, options(), new byte[3]));
        call.cancel("the test cancels", null);
        assertEquals(Status.Code.CANCELLED, closed.get(60, TimeUnit.SECONDS).getCode());
        assertTrue(server.hangCancelled.await(60, TimeUnit.SECONDS), "the server saw the call cancelled");
    }

    @Test
    void metadataTravelsBothWays() {
        RpcChannel ch = channel(WireProtocol.AUTO);
        Metadata headers = new Metadata();
        headers.put(TestService.ASCII_KEY, "hello");
        headers.put(TestService.BINARY_KEY, new byte[] {0, 1, 2, (byte) 0xff, 10, 13});
        ResponseMetadata response = new ResponseMetadata();
        byte[] answer = ClientCalls.blockingUnaryCall(ch, TestService.META,
                options().withHeaders(headers).withResponseMetadata(response), new byte[] {7});
        assertArrayEquals(new byte[] {7}, answer);
        assertEquals("hello", server.lastHeaders.get(StockGrpcServer.ASCII));
        assertArrayEquals(new byte[] {0, 1, 2, (byte) 0xff, 10, 13}, server.lastHeaders.get(StockGrpcServer.BINARY));
        assertEquals("hello", response.headers().get(TestService.ASCII_KEY));
        assertArrayEquals(new byte[] {0, 1, 2, (byte) 0xff, 10, 13}, response.headers().get(TestService.BINARY_KEY));
        assertEquals("trailer-hello", response.trailers().get(TestService.ASCII_KEY));
    }

    @Test
    void errorStatusAndItsDescriptionArriveIntact() {
        RpcChannel ch = channel(WireProtocol.AUTO);
        StatusException e = assertThrows(StatusException.class,
                () -> ClientCalls.blockingUnaryCall(ch, TestService.THROW, options(), new byte[1]));
        assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode());
        assertEquals(StockGrpcServer.ERROR_DESCRIPTION, e.getStatus().getDescription());
        StatusException missing = assertThrows(StatusException.class, () -> ClientCalls.blockingUnaryCall(ch,
                Bytes.method("test.NoSuchService/Nothing", dev.rdmarpc.core.MethodDescriptor.MethodType.UNARY), options(), new byte[1]));
        assertEquals(Status.Code.UNIMPLEMENTED, missing.getStatus().getCode());
    }

    @Test
    void fourMebibyteMessagesAndTheSizeLimit() {
        RpcChannel ch = channel(WireProtocol.AUTO);
        byte[] big = Bytes.pattern(4 << 20, 3);
        assertArrayEquals(big, ClientCalls.blockingUnaryCall(ch, TestService.ECHO, options(), big));
        byte[] tooBig = Bytes.pattern((4 << 20) + 1, 4); // over the channel's default 4 MiB inbound limit when echoed
        StatusException e = assertThrows(StatusException.class, () -> ClientCalls.blockingUnaryCall(ch, TestService.ECHO, options(), tooBig));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
        byte[] overServerLimit = new byte[(16 << 20) + 1];
        StatusException refused = assertThrows(StatusException.class,
                () -> ClientCalls.blockingUnaryCall(ch, TestService.ECHO, options(), overServerLimit));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, refused.getStatus().getCode());
        // the connection carries on
        assertArrayEquals(new byte[5], ClientCalls.blockingUnaryCall(ch, TestService.ECHO, options(), new byte[5]));
        assertEquals(1, server.connections.get());
    }

    @Test
    void gzipAndKeepalivePings() throws Exception {
        RpcChannel ch = channel(WireProtocol.AUTO);
        byte[] compressible = new byte[100_000];
        assertArrayEquals(compressible, ClientCalls.blockingUnaryCall(ch, TestService.ECHO, options().withCompression("gzip"), compressible));
        assertTrue(ch.ping().get(60, TimeUnit.SECONDS) > 0, "the server answered the PING");
    }

    @Test
    void anRdmarpcServerStillGetsRdmarpcFromAnAutoChannel() throws Exception {
        dev.rdmarpc.core.RpcServer rdmarpc = dev.rdmarpc.core.RpcServer.forPort(0).addService(new TestService().definition()).build().start();
        try (TcpProxy proxy = new TcpProxy(rdmarpc.getPort())) {
            RpcChannel ch = channel(WireProtocol.AUTO, proxy.port());
            assertArrayEquals(new byte[4], ClientCalls.blockingUnaryCall(ch, TestService.ECHO, options(), new byte[4]));
            assertEquals("tcp", ch.currentTransport());
            assertEquals(1, proxy.accepted(), "one connection: no second dial");
        } finally {
            channel.shutdownNow();
            channel.awaitTermination(60, TimeUnit.SECONDS);
            rdmarpc.shutdownNow();
            rdmarpc.awaitTermination(60, TimeUnit.SECONDS);
        }
    }

    @Test
    void grpcChannelsCallAnRdmarpcServerOverItsHttp2Side() throws Exception {
        TestService service = new TestService();
        dev.rdmarpc.core.RpcServer rdmarpc = dev.rdmarpc.core.RpcServer.forPort(0).addService(service.definition()).build().start();
        try {
            RpcChannel ch = channel(WireProtocol.GRPC, rdmarpc.getPort());
            byte[] big = Bytes.pattern(3 << 20, 5);
            assertArrayEquals(big, ClientCalls.blockingUnaryCall(ch, TestService.ECHO, options(), big));
            assertEquals("h2", ch.currentTransport());
            StatusException e = assertThrows(StatusException.class, () -> ClientCalls.blockingUnaryCall(ch, TestService.HANG,
                    CallOptions.DEFAULT.withDeadlineAfter(1, TimeUnit.SECONDS), new byte[1]));
            assertEquals(Status.Code.DEADLINE_EXCEEDED, e.getStatus().getCode());
            assertTrue(service.hangCancelled.await(60, TimeUnit.SECONDS), "the server saw the call cancelled");
        } finally {
            channel.shutdownNow();
            channel.awaitTermination(60, TimeUnit.SECONDS);
            rdmarpc.shutdownNow();
            rdmarpc.awaitTermination(60, TimeUnit.SECONDS);
        }
    }

    @Test
    void rdmarpcOnlyChannelsNameTheMismatch() {
        RpcChannel ch = channel(WireProtocol.RDMARPC);
        StatusException e = assertThrows(StatusException.class, () -> ClientCalls.blockingUnaryCall(ch, TestService.ECHO, options(), new byte[1]));
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("HTTP/2 SETTINGS"), e.getStatus().getDescription());
        assertEquals(0, server.connections.get());
    }

    @Test
    void autoRemembersAnHttp2ServerAndDialsItWithHttp2Next() throws Exception {
        try (TcpProxy proxy = new TcpProxy(server.port())) {
            RpcChannel ch = channel(WireProtocol.AUTO, proxy.port());
            assertArrayEquals(new byte[2], ClientCalls.blockingUnaryCall(ch, TestService.ECHO, options(), new byte[2]));
            assertEquals(2, proxy.accepted(), "a HELLO that met HTTP/2 SETTINGS, then an HTTP/2 connection");
            proxy.goAway();
            Await.until(() -> ch.currentTransport() == null, "the channel saw its connection end");
            proxy.comeBack();
            assertArrayEquals(new byte[3], ClientCalls.blockingUnaryCall(ch, TestService.ECHO, options(), new byte[3]));
            assertEquals(3, proxy.accepted(), "the next connection went straight to HTTP/2");
            assertEquals(2, server.connections.get());
        }
    }

    @Test
    void grpcChannelsNeverOfferRdmarpc() throws Exception {
        try (TcpProxy proxy = new TcpProxy(server.port())) {
            RpcChannel ch = channel(WireProtocol.GRPC, proxy.port());
            assertArrayEquals(new byte[2], ClientCalls.blockingUnaryCall(ch, TestService.ECHO, options(), new byte[2]));
            assertEquals(1, proxy.accepted());
        }
    }
}
