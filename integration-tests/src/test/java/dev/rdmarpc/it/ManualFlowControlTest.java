package dev.rdmarpc.it;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCallStreamObserver;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.ClientResponseObserver;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.MethodDescriptor.MethodType;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.ServerCallStreamObserver;
import dev.rdmarpc.core.ServerCalls;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Manual flow control as grpc-java has it, over a real loopback connection: a client that turns automatic requests off
 * in {@code beforeStart} and asks for responses itself (server streaming and bidi), a server that does the same for
 * requests ({@code disableAutoRequest}), {@code request(0)} a no-op and negative counts refused on both sides.
 */
class ManualFlowControlTest extends LoopbackTest {
    private static final String NAME = "test.Paced";
    /** Server streaming: request = message size; sends as long as the stream is ready (onReady style), forever. */
    static final MethodDescriptor<byte[], byte[]> PRODUCE =
            Bytes.method(NAME + "/Produce", MethodType.SERVER_STREAMING);
    /** Bidi: the server asks for requests only when the test says; it echoes each one. */
    static final MethodDescriptor<byte[], byte[]> PACED_ECHO =
            Bytes.method(NAME + "/PacedEcho", MethodType.BIDI_STREAMING);
    private static final int MESSAGE = 1024;
    private static final int WINDOW = 64 * 1024;

    private final Producer producer = new Producer();
    private final CompletableFuture<ServerCallStreamObserver<byte[]>> echoCall = new CompletableFuture<>();
    private final List<byte[]> echoReceived = new CopyOnWriteArrayList<>();

    @Override
    protected RpcServer.Builder configureServer(RpcServer.Builder b) {
        return b.addService(ServiceDefinition.builder(NAME)
                .addMethod(PRODUCE, ServerCalls.asyncServerStreamingCall((req, obs) -> producer.start(req, obs)))
                .addMethod(PACED_ECHO, ServerCalls.asyncBidiStreamingCall(this::pacedEcho))
                .build());
    }

    @Override
    protected RpcChannel.Builder configureChannel(RpcChannel.Builder b) {
        return b.flowControlWindow(WINDOW);
    }

    /** Sends while its call is ready, then waits for onReady: the server holds at most what flow control lets out. */
    static final class Producer {
        final AtomicInteger sent = new AtomicInteger();
        volatile boolean paused;
        private ServerCallStreamObserver<byte[]> call;
        private byte[] message;

        void start(byte[] request, StreamObserver<byte[]> obs) {
            synchronized (this) {
                call = (ServerCallStreamObserver<byte[]>) obs;
                message = new byte[Bytes.toInt(request)];
                call.setOnReadyHandler(this::pump);
            }
            pump();
        }

        synchronized void pump() {
            paused = false;
            while (call.isReady() && !call.isCancelled()) {
                call.onNext(message);
                sent.incrementAndGet();
            }
            paused = true;
        }
    }

    private StreamObserver<byte[]> pacedEcho(StreamObserver<byte[]> obs) {
        ServerCallStreamObserver<byte[]> call = (ServerCallStreamObserver<byte[]>) obs;
        call.disableAutoRequest();
        echoCall.complete(call);
        return new StreamObserver<>() {
            @Override
            public void onNext(byte[] value) {
                echoReceived.add(value);
                obs.onNext(value);
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
                obs.onCompleted();
            }
        };
    }

    /** A response observer that turns automatic requests off in beforeStart (with {@code setup}) and records what comes. */
    static final class Recorder implements ClientResponseObserver<byte[], byte[]> {
        final List<byte[]> received = new CopyOnWriteArrayList<>();
        final CompletableFuture<Status> closed = new CompletableFuture<>();
        private final Consumer<ClientCallStreamObserver<byte[]>> setup;
        volatile ClientCallStreamObserver<byte[]> requests;

        Recorder(Consumer<ClientCallStreamObserver<byte[]>> setup) {
            this.setup = setup;
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<byte[]> requestStream) {
            requests = requestStream;
            setup.accept(requestStream);
        }

        @Override
        public void onNext(byte[] value) {
            received.add(value);
        }

        @Override
        public void onError(Throwable t) {
            closed.complete(Status.fromThrowable(t));
        }

        @Override
        public void onCompleted() {
            closed.complete(Status.OK);
        }

        Status awaitClose() throws Exception {
            return closed.get(60, TimeUnit.SECONDS);
        }
    }

    private CallOptions options() {
        return CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS);
    }

    @Test
    void aSlowReaderGetsOneMessagePerRequestWhileTheServerHoldsOnlyWhatFlowControlLetsOut() throws Exception {
        Recorder reader = new Recorder(r -> r.disableAutoRequestWithInitial(0));
        ClientCalls.asyncServerStreamingCall(channel.newCall(PRODUCE, options()), Bytes.ofInt(MESSAGE), reader);
        int reads = 20;
        for (int i = 1; i <= reads; i++) {
            reader.requests.request(1); // the test reads one message at a time
            int want = i;
            Await.until(() -> reader.received.size() >= want, () -> reader.received.size() + " of " + want + " messages");
            assertEquals(want, reader.received.size(), "one message per request");
        }
        // the server runs until flow control stops it: the client's window, plus what the stream queues while ready
        Await.until(() -> producer.paused && producer.sent.get() > reads, () -> "the producer waiting for onReady after "
                + producer.sent.get() + " messages");
        long bound = reads + (WINDOW + 64 * 1024) / MESSAGE + 2;
        assertTrue(producer.sent.get() <= bound, "the server sent " + producer.sent.get() + " messages to a client that read "
                + reads + "; flow control allows " + bound);
        assertEquals(reads, reader.received.size(), "nothing delivered past what was requested");

        reader.requests.request(5); // reading again lets the server go on
        Await.until(() -> reader.received.size() == reads + 5, () -> reader.received.size() + " of " + (reads + 5));
        reader.requests.cancel("enough", null);
        assertEquals(Status.Code.CANCELLED, reader.awaitClose().getCode());
    }

    @Test
    void disableAutoInboundFlowControlStartsWithOneRequest() throws Exception {
        Recorder reader = new Recorder(ClientCallStreamObserver::disableAutoInboundFlowControl);
        ClientCalls.asyncServerStreamingCall(channel.newCall(TestService.STREAM, options()), streamRequest(10, 8), reader);
        Await.until(() -> reader.received.size() == 1, () -> reader.received.size() + " messages, not the first");
        reader.requests.request(3);
        Await.until(() -> reader.received.size() == 4, () -> reader.received.size() + " messages, not 4");
        reader.requests.request(100);
        assertEquals(Status.OK, reader.awaitClose());
        assertEquals(10, reader.received.size());
        for (int i = 0; i < 10; i++) {
            assertArrayEquals(Bytes.pattern(8, i), reader.received.get(i));
        }
    }

    @Test
    void requestZeroIsANoOpAndANegativeCountIsRefusedOnTheClient() throws Exception {
        Recorder reader = new Recorder(r -> r.disableAutoRequestWithInitial(0));
        ClientCalls.asyncServerStreamingCall(channel.newCall(TestService.STREAM, options()), streamRequest(2, 4), reader);
        reader.requests.request(0);
        assertThrows(IllegalArgumentException.class, () -> reader.requests.request(-1));
        reader.requests.request(2);
        assertEquals(Status.OK, reader.awaitClose());
        assertEquals(2, reader.received.size());
    }

    @Test
    void turningAutoRequestsOffAfterStartOrWithANegativeCountIsRefused() throws Exception {
        Recorder negative = new Recorder(r -> assertThrows(IllegalArgumentException.class, () -> r.disableAutoRequestWithInitial(-1)));
        ClientCalls.asyncServerStreamingCall(channel.newCall(TestService.STREAM, options()), streamRequest(1, 4), negative);
        assertEquals(Status.OK, negative.awaitClose(), "a refused setting leaves automatic requests on");
        assertThrows(IllegalStateException.class, negative.requests::disableAutoInboundFlowControl);
    }

    @Test
    void bidiWithManualRequestsOnBothSides() throws Exception {
        Recorder client = new Recorder(ClientCallStreamObserver::disableAutoInboundFlowControl);
        StreamObserver<byte[]> requests = ClientCalls.asyncBidiStreamingCall(channel.newCall(PACED_ECHO, options()), client);
        ServerCallStreamObserver<byte[]> server = echoCall.get(60, TimeUnit.SECONDS);
        // the client sends until flow control stops it: the server asked for nothing, so it reads nothing
        int sent = 0;
        while (client.requests.isReady() || sent == 0) {
            requests.onNext(Bytes.pattern(MESSAGE, sent++));
            if (sent > 10_000) {
                break;
            }
        }
        assertTrue(sent < 10_000, "flow control never stopped the client: " + sent + " requests sent");
        assertEquals(0, echoReceived.size(), "the server got requests it never asked for");

        server.request(0); // a no-op
        assertThrows(IllegalArgumentException.class, () -> server.request(-1));
        server.request(3);
        Await.until(() -> echoReceived.size() == 3, () -> echoReceived.size() + " requests at the server, not 3");
        // the client asked for one reply (disableAutoInboundFlowControl): it has exactly that one
        Await.until(() -> client.received.size() == 1, () -> client.received.size() + " replies, not 1");
        client.requests.request(2);
        Await.until(() -> client.received.size() == 3, () -> client.received.size() + " replies, not 3");
        assertEquals(3, echoReceived.size(), "the server read only what it asked for");

        int total = sent;
        server.request(total);
        client.requests.request(total);
        requests.onCompleted();
        assertEquals(Status.OK, client.awaitClose());
        assertEquals(total, client.received.size());
        for (int i = 0; i < total; i++) {
            assertArrayEquals(Bytes.pattern(MESSAGE, i), client.received.get(i));
        }
    }

    private static byte[] streamRequest(int count, int size) {
        byte[] r = new byte[8];
        System.arraycopy(Bytes.ofInt(count), 0, r, 0, 4);
        System.arraycopy(Bytes.ofInt(size), 0, r, 4, 4);
        return r;
    }
}
