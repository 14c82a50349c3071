package dev.rdmarpc.codegen.tests;

import dev.rdmarpc.codegen.tests.echo.EchoRequest;
import dev.rdmarpc.codegen.tests.echo.EchoResponse;
import dev.rdmarpc.codegen.tests.echo.EchoRpc;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.WithAttachment;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The generated {@code …WithAttachment} methods: the async stub sends and receives attachments, an implementation that
 * overrides the handler's attachment-aware variant gets them, and one that does not still answers (the attachment
 * released for it).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AttachmentStubsTest {
    private Loopback loopback;

    /** Echoes each request's text, and its attachment back as the response's (released by the call once sent). */
    static final class AttachingEcho extends EchoRpc.EchoImplBase {
        @Override
        public void unaryWithAttachment(WithAttachment<EchoRequest> request,
                                        StreamObserver<WithAttachment<EchoResponse>> responseObserver) {
            responseObserver.onNext(new WithAttachment<>(EchoResponse.newBuilder().setText(request.message().getText()).build(),
                    request.attachment()));
            responseObserver.onCompleted();
        }

        @Override
        public StreamObserver<WithAttachment<EchoRequest>> bidiStreamWithAttachment(
                StreamObserver<WithAttachment<EchoResponse>> responseObserver) {
            return new StreamObserver<>() {
                @Override
                public void onNext(WithAttachment<EchoRequest> value) {
                    responseObserver.onNext(new WithAttachment<>(
                            EchoResponse.newBuilder().setText(value.message().getText()).build(), value.attachment()));
                }

                @Override
                public void onError(Throwable t) {
                }

                @Override
                public void onCompleted() {
                    responseObserver.onCompleted();
                }
            };
        }

        @Override
        public void serverStream(EchoRequest request, StreamObserver<EchoResponse> responseObserver) {
            responseObserver.onNext(EchoResponse.newBuilder().setText("plain " + request.getText()).build());
            responseObserver.onCompleted();
        }
    }

    /** Collects responses, copying and releasing their attachments. */
    static final class Collect implements StreamObserver<WithAttachment<EchoResponse>> {
        final List<String> texts = new CopyOnWriteArrayList<>();
        final List<byte[]> attachments = new CopyOnWriteArrayList<>();
        final CompletableFuture<Throwable> done = new CompletableFuture<>();

        @Override
        public void onNext(WithAttachment<EchoResponse> value) {
            texts.add(value.message().getText());
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

    @AfterEach
    void stop() {
        loopback.close();
    }

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 131 + seed);
        }
        return b;
    }

    private static MemorySegment native_(Arena arena, byte[] bytes) {
        MemorySegment s = arena.allocate(Math.max(1, bytes.length)).asSlice(0, bytes.length);
        MemorySegment.copy(bytes, 0, s, ValueLayout.JAVA_BYTE, 0, bytes.length);
        return s;
    }

    @Test
    void generatedStubsCarryAttachmentsOnUnaryAndBidiCalls() throws Exception {
        loopback = Loopback.serve(new AttachingEcho());
        EchoRpc.EchoStub stub = EchoRpc.newStub(loopback.channel());
        byte[] big = pattern(3 << 20, 1);
        byte[] small = pattern(7, 2);
        AtomicInteger releases = new AtomicInteger();
        CountDownLatch allReleased = new CountDownLatch(3);
        Runnable onReleased = () -> {
            releases.incrementAndGet();
            allReleased.countDown();
        };
        try (Arena arena = Arena.ofShared()) {
            Collect unary = new Collect();
            stub.unaryWithAttachment(WithAttachment.of(EchoRequest.newBuilder().setText("one").build(),
                    native_(arena, big), onReleased), unary);
            assertNull(unary.done.get(60, TimeUnit.SECONDS));
            assertEquals(List.of("one"), unary.texts);
            assertArrayEquals(big, unary.attachments.get(0));

            Collect bidi = new Collect();
            StreamObserver<WithAttachment<EchoRequest>> requests = stub.bidiStreamWithAttachment(bidi);
            requests.onNext(WithAttachment.of(EchoRequest.newBuilder().setText("a").build(), native_(arena, small),
                    onReleased));
            requests.onNext(WithAttachment.of(EchoRequest.newBuilder().setText("b").build()));
            requests.onCompleted();
            assertNull(bidi.done.get(60, TimeUnit.SECONDS));
            assertEquals(List.of("a", "b"), bidi.texts);
            assertArrayEquals(small, bidi.attachments.get(0));
            assertNull(bidi.attachments.get(1));

            Collect plain = new Collect();
            stub.serverStreamWithAttachment(WithAttachment.of(EchoRequest.newBuilder().setText("x").build(),
                    native_(arena, small), onReleased), plain);
            assertNull(plain.done.get(60, TimeUnit.SECONDS));
            assertEquals(List.of("plain x"), plain.texts, "a handler without attachments answers through the default");
            assertNull(plain.attachments.get(0));
            assertTrue(allReleased.await(60, TimeUnit.SECONDS), "each sent attachment released");
            assertEquals(3, releases.get(), "once each");
        }
    }
}
