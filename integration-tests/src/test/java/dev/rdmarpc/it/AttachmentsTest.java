package dev.rdmarpc.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.core.Attachment;
import dev.rdmarpc.core.AttachmentCalls;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.ServerCalls;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.WithAttachment;
import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCall;
import dev.rdmarpc.core.Deadline;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.MethodDescriptor.MethodType;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.ServerCall;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.testing.Await;
import dev.rdmarpc.core.testing.LockCheckingInterceptors;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Attachments over TCP on loopback: a MemorySegment beside a message in both directions, on unary and streaming calls,
 * sent from the caller's memory and received as a read-only view until released; the sender's release callback runs
 * exactly once on every path; oversize attachments and segments closed mid-send fail only their call.
 */
class AttachmentsTest extends LoopbackTest {
    /** Echoes each request and its attachment (the received view, released once the response has been sent). */
    static final MethodDescriptor<byte[], byte[]> ECHO =
            MethodDescriptor.create("test.Attach/Echo", MethodType.UNARY, Bytes.MARSHALLER, Bytes.MARSHALLER);
    static final MethodDescriptor<byte[], byte[]> ECHO_STREAM =
            MethodDescriptor.create("test.Attach/EchoStream", MethodType.BIDI_STREAMING, Bytes.MARSHALLER, Bytes.MARSHALLER);
    /** Answers each request with a response carrying an attachment of the size the request names (4-byte int). */
    static final MethodDescriptor<byte[], byte[]> SIZED =
            MethodDescriptor.create("test.Attach/Sized", MethodType.UNARY, Bytes.MARSHALLER, Bytes.MARSHALLER);
    /** Takes the call and asks for nothing until the test says so. */
    static final MethodDescriptor<byte[], byte[]> HOLD =
            MethodDescriptor.create("test.Attach/Hold", MethodType.BIDI_STREAMING, Bytes.MARSHALLER, Bytes.MARSHALLER);

    /** Observer-style methods through {@link AttachmentCalls}: echo with the received attachment sent straight back. */
    static final MethodDescriptor<byte[], byte[]> OBSERVED_ECHO =
            MethodDescriptor.create("test.Attach/ObservedEcho", MethodType.UNARY, Bytes.MARSHALLER, Bytes.MARSHALLER);
    static final MethodDescriptor<byte[], byte[]> OBSERVED_STREAM =
            MethodDescriptor.create("test.Attach/ObservedStream", MethodType.BIDI_STREAMING, Bytes.MARSHALLER, Bytes.MARSHALLER);

    private static final int WINDOW = 64 * 1024;

    private final CompletableFuture<ServerCall<byte[], byte[]>> held = new CompletableFuture<>();
    private final CompletableFuture<Void> heldCancelled = new CompletableFuture<>();
    private final AtomicInteger serverReleases = new AtomicInteger();

    @TempDir
    Path dir;

    @Override
    protected RpcServer.Builder configureServer(RpcServer.Builder b) {
        ServiceDefinition attach = ServiceDefinition.builder("test.Attach")
                .addMethod(ECHO, AttachmentsTest::echo)
                .addMethod(ECHO_STREAM, AttachmentsTest::echo)
                .addMethod(SIZED, (call, headers) -> {
                    call.request(1);
                    return new ServerCall.Listener<>() {
                        @Override
                        @SuppressWarnings("MustBeClosedChecker") // closed by the release callback
                        public void onMessage(byte[] message) {
                            int size = Bytes.toInt(message);
                            Arena arena = Arena.ofShared();
                            MemorySegment body = arena.allocate(Math.max(1, size)).asSlice(0, size);
                            call.sendMessage(message, body, () -> {
                                serverReleases.incrementAndGet();
                                arena.close();
                            });
                            call.close(Status.OK, new Metadata());
                        }
                    };
                })
                .addMethod(OBSERVED_ECHO, AttachmentCalls.server(ServerCalls.<WithAttachment<byte[]>, WithAttachment<byte[]>>asyncUnaryCall(
                        (req, out) -> {
                            out.onNext(req); // the received attachment goes back out; the call releases it once sent
                            out.onCompleted();
                        })))
                .addMethod(OBSERVED_STREAM, AttachmentCalls.server(ServerCalls.<WithAttachment<byte[]>, WithAttachment<byte[]>>asyncBidiStreamingCall(
                        out -> new StreamObserver<>() {
                            @Override
                            public void onNext(WithAttachment<byte[]> value) {
                                out.onNext(value);
                            }

                            @Override
                            public void onError(Throwable t) {
                            }

                            @Override
                            public void onCompleted() {
                                out.onCompleted();
                            }
                        })))
                .addMethod(HOLD, (call, headers) -> {
                    held.complete(call);
                    return new ServerCall.Listener<>() {
                        @Override
                        public void onMessage(byte[] message, Attachment attachment) {
                            attachment.release();
                        }

                        @Override
                        public void onCancel() {
                            heldCancelled.complete(null);
                        }
                    };
                })
                .build();
        return b.addService(attach).maxInboundAttachmentSize(20 << 20).flowControlWindow(WINDOW);
    }

    @Override
    protected RpcChannel.Builder configureChannel(RpcChannel.Builder b) {
        return b.maxInboundAttachmentSize(20 << 20);
    }

    /** Echoes each request, with its attachment when it has one (read-only views only). */
    static ServerCall.Listener<byte[]> echo(ServerCall<byte[], byte[]> call, Metadata headers) {
        call.request(1);
        return new ServerCall.Listener<>() {
            @Override
            public void onMessage(byte[] message, Attachment attachment) {
                if (!attachment.segment().isReadOnly()) {
                    attachment.release();
                    call.close(Status.INTERNAL.withDescription("the received attachment is writable"), new Metadata());
                    return;
                }
                call.sendMessage(message, attachment.segment(), attachment::release);
                call.request(1);
            }

            @Override
            public void onMessage(byte[] message) {
                call.sendMessage(message, null, null); // no attachment: the same as a plain message
                call.request(1);
            }

            @Override
            public void onHalfClose() {
                call.close(Status.OK, new Metadata());
            }
        };
    }

    /** What a client call received. */
    static final class Received extends ClientCall.Listener<byte[]> {
        final List<byte[]> messages = new CopyOnWriteArrayList<>();
        final List<byte[]> attachments = new CopyOnWriteArrayList<>();
        final CompletableFuture<Status> closed = new CompletableFuture<>();
        volatile boolean viewsReadOnly = true;

        @Override
        public void onMessage(byte[] message, Attachment attachment) {
            viewsReadOnly &= attachment.segment().isReadOnly();
            messages.add(message);
            attachments.add(attachment.toByteArray());
            attachment.release();
        }

        @Override
        public void onMessage(byte[] message) {
            messages.add(message);
            attachments.add(null);
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            closed.complete(status);
        }

        Status status() throws Exception {
            return closed.get(60, TimeUnit.SECONDS);
        }
    }

    /** A native segment holding {@code pattern(size, seed)}, and a count of its release callbacks. */
    static final class Sent implements AutoCloseable {
        final Arena arena;
        final MemorySegment segment;
        final byte[] bytes;
        final AtomicInteger releases = new AtomicInteger();

        @SuppressWarnings("MustBeClosedChecker") // closed by close()
        Sent(int size, int seed) {
            arena = Arena.ofShared();
            bytes = Bytes.pattern(size, seed);
            segment = arena.allocate(Math.max(1, size), 4096).asSlice(0, size);
            MemorySegment.copy(bytes, 0, segment, ValueLayout.JAVA_BYTE, 0, size);
        }

        /** The release callback: counts, and checks it runs under no lock of rdmarpc's. */
        Runnable onReleased() {
            return LockCheckingInterceptors.checkedRelease(releases::incrementAndGet);
        }

        /** Waits for the release callback, then checks it ran once. */
        void assertReleasedOnce() {
            Await.until(() -> releases.get() > 0, "the attachment's release callback");
            assertEquals(1, releases.get(), "release callbacks");
        }

        @Override
        public void close() {
            arena.close();
        }
    }

    private Received unary(MethodDescriptor<byte[], byte[]> method, byte[] request, Sent attachment, CallOptions options) {
        ClientCall<byte[], byte[]> call = channel.newCall(method, options);
        Received r = new Received();
        call.start(r, new Metadata());
        call.request(2);
        if (attachment == null) {
            call.sendMessage(request);
        } else {
            call.sendMessage(request, attachment.segment, attachment.onReleased());
        }
        call.halfClose();
        return r;
    }

    @Test
    void unaryCallsCarryAttachmentsOfEverySizeBothWays() throws Exception {
        for (int size : new int[]{0, 1, 1 << 20, 16 << 20}) {
            try (Sent sent = new Sent(size, size)) {
                byte[] request = Bytes.pattern(100, 7);
                Received r = unary(ECHO, request, sent, CallOptions.DEFAULT);
                assertEquals(Status.Code.OK, r.status().getCode(), () -> size + " B: " + r.closed.join());
                assertEquals(1, r.messages.size());
                assertArrayEquals(request, r.messages.get(0), "the message beside a " + size + "-byte attachment");
                assertArrayEquals(sent.bytes, r.attachments.get(0), "the attachment of " + size + " bytes came back intact");
                assertTrue(r.viewsReadOnly, "the received attachment is a read-only view");
                sent.assertReleasedOnce();
            }
        }
    }

    @Test
    void streamingCallsCarryAttachmentsBothWays() throws Exception {
        ClientCall<byte[], byte[]> call = channel.newCall(ECHO_STREAM, CallOptions.DEFAULT);
        Received r = new Received();
        call.start(r, new Metadata());
        call.request(10);
        List<Sent> sent = new java.util.ArrayList<>();
        int[] sizes = {1 << 20, 0, 16 << 20, 1, 3 * 65536 + 5};
        try {
            for (int i = 0; i < sizes.length; i++) {
                Sent s = new Sent(sizes[i], i);
                sent.add(s);
                call.sendMessage(Bytes.ofInt(i), s.segment, s.onReleased());
            }
            call.sendMessage(Bytes.ofInt(99)); // a message without an attachment in between
            call.halfClose();
            assertEquals(Status.Code.OK, r.status().getCode(), () -> r.closed.join().toString());
            assertEquals(sizes.length + 1, r.messages.size());
            for (int i = 0; i < sizes.length; i++) {
                assertEquals(i, Bytes.toInt(r.messages.get(i)));
                assertArrayEquals(sent.get(i).bytes, r.attachments.get(i), "attachment " + i + " of " + sizes[i] + " bytes");
                sent.get(i).assertReleasedOnce();
            }
            assertEquals(99, Bytes.toInt(r.messages.get(sizes.length)));
            assertEquals(null, r.attachments.get(sizes.length), "the plain message came without an attachment");
        } finally {
            sent.forEach(Sent::close);
        }
    }

    @Test
    void anMmapedFileRegionTravelsAsAnAttachment() throws Exception {
        Path file = dir.resolve("region.bin");
        byte[] content = Bytes.pattern(3 << 20, 42);
        Files.write(file, content);
        int offset = 4096 + 17;
        int length = (2 << 20) + 3;
        try (FileChannel fc = FileChannel.open(file, StandardOpenOption.READ); Arena arena = Arena.ofShared()) {
            MemorySegment region = fc.map(FileChannel.MapMode.READ_ONLY, 0, content.length, arena).asSlice(offset, length);
            AtomicInteger releases = new AtomicInteger();
            ClientCall<byte[], byte[]> call = channel.newCall(ECHO, CallOptions.DEFAULT);
            Received r = new Received();
            call.start(r, new Metadata());
            call.request(2);
            call.sendMessage(new byte[]{1}, region, LockCheckingInterceptors.checkedRelease(releases::incrementAndGet));
            call.halfClose();
            assertEquals(Status.Code.OK, r.status().getCode(), () -> r.closed.join().toString());
            assertArrayEquals(java.util.Arrays.copyOfRange(content, offset, offset + length), r.attachments.get(0),
                    "the file's bytes, byte for byte");
            Await.until(() -> releases.get() > 0, "the region's release callback");
            assertEquals(1, releases.get());
        }
    }

    @Test
    void aRequestAttachmentOverTheServersLimitFailsBeforeItIsSent() throws Exception {
        try (Sent sent = new Sent(21 << 20, 1)) {
            Received r = unary(ECHO, new byte[]{1}, sent, CallOptions.DEFAULT);
            Status s = r.status();
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, s.getCode(), s::toString);
            assertTrue(s.getDescription().contains("exceeds the maximum inbound attachment size " + (20 << 20)), s::toString);
            sent.assertReleasedOnce();
        }
        // the connection carries on
        try (Sent sent = new Sent(10, 2)) {
            assertEquals(Status.Code.OK, unary(ECHO, new byte[]{2}, sent, CallOptions.DEFAULT).status().getCode());
        }
    }

    @Test
    void aResponseAttachmentOverTheClientsLimitFailsThatCall() throws Exception {
        Received r = unary(SIZED, Bytes.ofInt(21 << 20), null, CallOptions.DEFAULT);
        Status s = r.status();
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, s.getCode(), s::toString);
        assertTrue(s.getDescription().contains("exceeds the maximum inbound attachment size " + (20 << 20)), s::toString);
        Await.until(() -> serverReleases.get() == 1, "the server's release callback");
        Received ok = unary(SIZED, Bytes.ofInt(5 << 20), null, CallOptions.DEFAULT);
        assertEquals(Status.Code.OK, ok.status().getCode(), () -> ok.closed.join().toString());
        assertEquals(5 << 20, ok.attachments.get(0).length);
        Await.until(() -> serverReleases.get() == 2, "the server's release callbacks");
    }

    /**
     * Starts a HOLD call and sends a message exactly filling the server's window, then an attachment behind it: none
     * of the attachment's bytes can leave until the server asks for the message.
     */
    private ClientCall<byte[], byte[]> stalledCall(Received r, Sent attachment, CallOptions options) throws Exception {
        ClientCall<byte[], byte[]> call = channel.newCall(HOLD, options);
        call.start(r, new Metadata());
        held.get(60, TimeUnit.SECONDS); // the stream is open: the send below goes out at once, up to the window
        call.sendMessage(new byte[WINDOW - 8], attachment.segment, attachment.onReleased());
        return call;
    }

    @Test
    void aSegmentClosedByItsOwnerWhileInFlightFailsThatCallOnly() throws Exception {
        Sent sent = new Sent(4 << 20, 3);
        Received r = new Received();
        stalledCall(r, sent, CallOptions.DEFAULT);
        sent.close(); // no byte of it has left yet: the window is used up by the message
        held.get().request(1); // the server asks: window credit lets the attachment go, and the stream finds it closed
        Status s = r.status();
        assertEquals(Status.Code.FAILED_PRECONDITION, s.getCode(), s::toString);
        assertTrue(s.getDescription().contains("closed by its owner"), s::toString);
        sent.assertReleasedOnce();
        heldCancelled.get(60, TimeUnit.SECONDS);
        try (Sent other = new Sent(1 << 20, 4)) {
            assertEquals(Status.Code.OK, unary(ECHO, new byte[]{3}, other, CallOptions.DEFAULT).status().getCode());
        }
    }

    @Test
    void theReleaseCallbackRunsOnceWhenTheCallIsCancelled() throws Exception {
        try (Sent sent = new Sent(4 << 20, 5)) {
            Received r = new Received();
            ClientCall<byte[], byte[]> call = stalledCall(r, sent, CallOptions.DEFAULT);
            call.cancel("test cancels", null);
            assertEquals(Status.Code.CANCELLED, r.status().getCode());
            sent.assertReleasedOnce();
            heldCancelled.get(60, TimeUnit.SECONDS);
        }
    }

    @Test
    void theReleaseCallbackRunsOnceWhenTheDeadlineExpires() throws Exception {
        try (Sent sent = new Sent(4 << 20, 6)) {
            Received r = new Received();
            stalledCall(r, sent, CallOptions.DEFAULT.withDeadline(Deadline.after(2, TimeUnit.SECONDS)));
            assertEquals(Status.Code.DEADLINE_EXCEEDED, r.status().getCode());
            sent.assertReleasedOnce();
        }
    }

    @Test
    void theReleaseCallbackRunsOnceWhenTheConnectionIsLost() throws Exception {
        try (Sent sent = new Sent(4 << 20, 7)) {
            Received r = new Received();
            stalledCall(r, sent, CallOptions.DEFAULT);
            server.shutdownNow();
            assertEquals(Status.Code.UNAVAILABLE, r.status().getCode(), () -> r.closed.join().toString());
            sent.assertReleasedOnce();
        }
    }

    /** Collects WithAttachment values, copying and releasing each attachment. */
    static final class Observed implements StreamObserver<WithAttachment<byte[]>> {
        final List<byte[]> messages = new CopyOnWriteArrayList<>();
        final List<byte[]> attachments = new CopyOnWriteArrayList<>();
        final CompletableFuture<Throwable> done = new CompletableFuture<>();

        @Override
        public void onNext(WithAttachment<byte[]> value) {
            messages.add(value.message());
            attachments.add(value.attachment() == null ? null : value.attachment().toByteArray());
            value.release();
        }

        @Override
        public void onError(Throwable t) {
            done.complete(t);
        }

        @Override
        public void onCompleted() {
            done.complete(null);
        }
    }

    @Test
    void theObserverApiCarriesAttachmentsOnUnaryAndStreamingCalls() throws Exception {
        try (Sent sent = new Sent(1 << 20, 11)) {
            Observed unary = new Observed();
            ClientCalls.asyncUnaryCall(AttachmentCalls.client(channel.newCall(OBSERVED_ECHO, CallOptions.DEFAULT)),
                    WithAttachment.of(new byte[]{5}, sent.segment, sent.onReleased()), unary);
            assertEquals(null, unary.done.get(60, TimeUnit.SECONDS));
            assertArrayEquals(new byte[]{5}, unary.messages.get(0));
            assertArrayEquals(sent.bytes, unary.attachments.get(0));
            sent.assertReleasedOnce();
        }
        try (Sent a = new Sent(16 << 20, 12); Sent b = new Sent(1, 13)) {
            Observed streamed = new Observed();
            StreamObserver<WithAttachment<byte[]>> requests = ClientCalls.asyncBidiStreamingCall(
                    AttachmentCalls.client(channel.newCall(OBSERVED_STREAM, CallOptions.DEFAULT)), streamed);
            requests.onNext(WithAttachment.of(new byte[]{1}, a.segment, a.onReleased()));
            requests.onNext(WithAttachment.of(new byte[]{2}));
            requests.onNext(WithAttachment.of(new byte[]{3}, b.segment, b.onReleased()));
            requests.onCompleted();
            assertEquals(null, streamed.done.get(60, TimeUnit.SECONDS));
            assertEquals(3, streamed.messages.size());
            assertArrayEquals(a.bytes, streamed.attachments.get(0));
            assertEquals(null, streamed.attachments.get(1));
            assertArrayEquals(b.bytes, streamed.attachments.get(2));
            a.assertReleasedOnce();
            b.assertReleasedOnce();
        }
    }
}
