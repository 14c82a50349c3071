package dev.rdmarpc.it;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCall;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.WireProtocol;
import dev.rdmarpc.core.buffer.SlabPool;
import io.grpc.TlsServerCredentials;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A native {@link RpcChannel} calling a stock grpc-java server over HTTP/2 with many large messages at once: far more
 * bytes in flight than HTTP/2's connection window, responses the application takes one at a time, so that every call
 * depends on the bridge returning HTTP/2 credit while other calls hold theirs. Every call is answered, no slab leaks.
 */
class GrpcServerLoadTest {
    /**
     * A bound for a hung call only: every call here ends long before (100 echoes of 4 MiB, 800 MiB through both
     * sides in this JVM, took up to 110 s on a loaded 2-core machine).
     */
    private static final long BOUND_SECONDS = 300;
    private long baseline;
    private StockGrpcServer server;
    private RpcChannel channel;

    private static CallOptions options() {
        return CallOptions.DEFAULT.withDeadlineAfter(BOUND_SECONDS, TimeUnit.SECONDS);
    }

    @BeforeEach
    void start() {
        baseline = SlabPool.shared().inUseBuffers();
    }

    @AfterEach
    void stop() throws Exception {
        if (channel != null) {
            channel.shutdownNow();
            channel.awaitTermination(60, TimeUnit.SECONDS);
        }
        if (server != null) {
            server.close();
        }
        LoopbackTest.assertSlabsBackToBaseline(baseline);
    }

    private RpcChannel plaintext() throws Exception {
        server = new StockGrpcServer(null, 16 << 20);
        channel = RpcChannel.forAddress("127.0.0.1", server.port()).wireProtocol(WireProtocol.GRPC).build();
        return channel;
    }

    @ParameterizedTest(name = "{0} calls of {1} bytes")
    @CsvSource({"64, 1048576", "100, 1048576"})
    void concurrentLargeUnaryEchoesAreAllAnswered(int calls, int size) throws Exception {
        echoAll(plaintext(), calls, size);
    }

    @ParameterizedTest(name = "{0} calls of {1} bytes")
    @CsvSource({"64, 4194304", "100, 4194304"})
    void concurrentEchoesLargerThanTheStreamWindowAreAllAnswered(int calls, int size) throws Exception {
        echoAll(plaintext(), calls, size);
    }

    @Test
    void concurrentLargeUnaryEchoesOverTls() throws Exception {
        server = new StockGrpcServer(TlsServerCredentials.newBuilder()
                .keyManager(TlsFiles.file("server.pem").toFile(), TlsFiles.file("server.key").toFile()).build(), 16 << 20);
        channel = RpcChannel.forAddress("localhost", server.port()).tls(TlsFiles.client().build())
                .wireProtocol(WireProtocol.GRPC).build();
        echoAll(channel, 64, 1 << 20);
        assertEquals("h2", channel.currentTransport());
    }

    @Test
    void concurrentLargeUnaryEchoesToAnRdmarpcServersHttp2Side() throws Exception {
        RpcServer rdmarpc = RpcServer.forPort(0).addService(new TestService().definition()).build().start();
        try {
            channel = RpcChannel.forAddress("127.0.0.1", rdmarpc.getPort()).wireProtocol(WireProtocol.GRPC).build();
            echoAll(channel, 64, 1 << 20);
            assertEquals("h2", channel.currentTransport());
        } finally {
            channel.shutdownNow();
            channel.awaitTermination(60, TimeUnit.SECONDS);
            rdmarpc.shutdownNow();
            rdmarpc.awaitTermination(60, TimeUnit.SECONDS);
        }
    }

    /** Starts {@code calls} echoes of {@code size} bytes at once and checks every answer. */
    static void echoAll(RpcChannel ch, int calls, int size) throws Exception {
        byte[] request = Bytes.pattern(size, 7);
        List<CompletableFuture<Boolean>> intact = new ArrayList<>();
        for (int i = 0; i < calls; i++) { // each answer is checked as it comes, and dropped
            intact.add(ClientCalls.futureUnaryCall(ch.newCall(TestService.ECHO, options()), request)
                    .thenApply(answer -> Arrays.equals(request, answer)));
        }
        for (CompletableFuture<Boolean> answer : intact) {
            assertTrue(answer.get(BOUND_SECONDS, TimeUnit.SECONDS), "the echo came back intact");
        }
    }

    /**
     * Several server-streaming calls of 1 MiB responses, each taken by the application one at a time and only after
     * the other calls' previous one: every call holds a full stream window of unread bytes while the others go on.
     */
    @Test
    void largeResponsesReadSlowlyWithManualFlowControl() throws Exception {
        RpcChannel ch = plaintext();
        int calls = 12;
        int count = 6;
        int size = 1 << 20;
        List<ClientCall<byte[], byte[]>> started = new ArrayList<>();
        List<BlockingQueue<byte[]>> received = new ArrayList<>();
        List<CompletableFuture<Status>> closed = new ArrayList<>();
        byte[] request = new byte[8];
        System.arraycopy(Bytes.ofInt(count), 0, request, 0, 4);
        System.arraycopy(Bytes.ofInt(size), 0, request, 4, 4);
        for (int i = 0; i < calls; i++) {
            ClientCall<byte[], byte[]> call = ch.newCall(TestService.STREAM, options());
            BlockingQueue<byte[]> messages = new LinkedBlockingQueue<>();
            CompletableFuture<Status> done = new CompletableFuture<>();
            call.start(new ClientCall.Listener<>() {
                @Override
                public void onMessage(byte[] message) {
                    messages.add(message);
                }

                @Override
                public void onClose(Status status, Metadata trailers) {
                    done.complete(status);
                }
            }, new Metadata());
            call.sendMessage(request);
            call.halfClose();
            call.request(1);
            started.add(call);
            received.add(messages);
            closed.add(done);
        }
        for (int n = 0; n < count; n++) {
            for (int i = 0; i < calls; i++) {
                byte[] message = received.get(i).poll(BOUND_SECONDS, TimeUnit.SECONDS);
                assertNotNull(message, "call " + i + " got its response " + n);
                assertArrayEquals(Bytes.pattern(size, n), message);
                started.get(i).request(1);
            }
        }
        for (CompletableFuture<Status> done : closed) {
            assertEquals(Status.Code.OK, done.get(BOUND_SECONDS, TimeUnit.SECONDS).getCode());
        }
    }

    @Test
    void bidiStreamsOfLargeMessages() throws Exception {
        RpcChannel ch = plaintext();
        int calls = 8;
        int count = 8;
        int size = 1 << 20;
        List<List<byte[]>> answers = new ArrayList<>();
        List<CompletableFuture<Void>> done = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            List<byte[]> all = new ArrayList<>();
            CompletableFuture<Void> finished = new CompletableFuture<>();
            StreamObserver<byte[]> chat = ClientCalls.asyncBidiStreamingCall(ch.newCall(TestService.CHAT, options()),
                    new StreamObserver<>() {
                        @Override
                        public void onNext(byte[] value) {
                            synchronized (all) {
                                all.add(value);
                            }
                        }

                        @Override
                        public void onError(Throwable t) {
                            finished.completeExceptionally(t);
                        }

                        @Override
                        public void onCompleted() {
                            finished.complete(null);
                        }
                    });
            for (int n = 0; n < count; n++) {
                chat.onNext(Bytes.pattern(size, n));
            }
            chat.onCompleted();
            answers.add(all);
            done.add(finished);
        }
        for (int i = 0; i < calls; i++) {
            done.get(i).get(BOUND_SECONDS, TimeUnit.SECONDS);
            List<byte[]> all = answers.get(i);
            synchronized (all) {
                assertEquals(count, all.size());
                for (int n = 0; n < count; n++) {
                    assertArrayEquals(Bytes.pattern(size, n), all.get(n));
                }
            }
        }
    }
}
