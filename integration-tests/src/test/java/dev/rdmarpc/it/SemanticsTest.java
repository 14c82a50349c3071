package dev.rdmarpc.it;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.ClientCall;
import dev.rdmarpc.core.Deadline;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.ResponseMetadata;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import org.junit.jupiter.api.Test;

import java.util.Iterator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Deadlines, cancellation, metadata, statuses, flow control and handler failures. */
class SemanticsTest extends LoopbackTest {

    private static StatusException call(Runnable r) {
        return assertThrows(StatusException.class, r::run);
    }

    @Test
    void deadlineIsPropagatedAndExpiryCancelsTheHandler() throws Exception {
        long start = System.nanoTime();
        StatusException e = call(() -> ClientCalls.blockingUnaryCall(channel, TestService.HANG,
                CallOptions.DEFAULT.withDeadlineAfter(300, TimeUnit.MILLISECONDS), new byte[1]));
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        assertEquals(Status.Code.DEADLINE_EXCEEDED, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("deadline exceeded"), e.getStatus().getDescription());
        assertTrue(tookMs >= 250 && tookMs < 5000, "took " + tookMs + " ms");
        long remaining = service.lastRemainingNanos.get();
        assertTrue(remaining > 0 && remaining <= TimeUnit.MILLISECONDS.toNanos(300),
                "handler saw the remaining time: " + remaining);
        assertTrue(service.hangCancelled.await(60, TimeUnit.SECONDS), "handler told of the expiry");
    }

    @Test
    void handlerSeesNoDeadlineWhenNoneIsSet() throws Exception {
        ClientCall<byte[], byte[]> call = channel.newCall(TestService.HANG, CallOptions.DEFAULT);
        CompletableFuture<byte[]> f = ClientCalls.futureUnaryCall(call, new byte[1]);
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (service.lastRemainingNanos.get() == -1 && System.nanoTime() < until) {
            Thread.sleep(5);
        }
        assertEquals(-2, service.lastRemainingNanos.get());
        f.cancel(true);
        assertTrue(service.hangCancelled.await(60, TimeUnit.SECONDS), "client cancel reaches the handler");
    }

    @Test
    void deadlineAlreadyPassedFailsFastWithoutSending() {
        Deadline past = Deadline.after(-1, TimeUnit.SECONDS);
        StatusException e = call(() -> ClientCalls.blockingUnaryCall(channel, TestService.ECHO,
                CallOptions.DEFAULT.withDeadline(past), new byte[1]));
        assertEquals(Status.Code.DEADLINE_EXCEEDED, e.getStatus().getCode());
        assertEquals(0, service.calls.get());
        assertNull(channel.currentTransport(), "nothing was sent: not even a connection was opened");
    }

    @Test
    void clientCancelReachesTheHandlerAndTheCaller() throws Exception {
        ClientCall<byte[], byte[]> call = channel.newCall(TestService.HANG, CallOptions.DEFAULT);
        CompletableFuture<byte[]> f = new CompletableFuture<>();
        ClientCalls.asyncUnaryCall(call, new byte[1], new dev.rdmarpc.core.StreamObserver<>() {
            @Override
            public void onNext(byte[] value) {
                f.complete(value);
            }

            @Override
            public void onError(Throwable t) {
                f.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
            }
        });
        while (service.calls.get() == 0) {
            Thread.sleep(2);
        }
        call.cancel("user gave up", new RuntimeException("why"));
        ExecutionException ee = assertThrows(ExecutionException.class, () -> f.get(60, TimeUnit.SECONDS));
        StatusException se = assertInstanceOf(StatusException.class, ee.getCause());
        assertEquals(Status.Code.CANCELLED, se.getStatus().getCode());
        assertEquals("user gave up", se.getStatus().getDescription());
        assertEquals("why", se.getStatus().getCause().getMessage());
        assertTrue(service.hangCancelled.await(60, TimeUnit.SECONDS));
    }

    @Test
    void handlerThatThrowsGivesUnknownWithItsMessage() {
        StatusException e = call(() -> ClientCalls.blockingUnaryCall(channel, TestService.THROW, CallOptions.DEFAULT, "x".getBytes()));
        assertEquals(Status.Code.UNKNOWN, e.getStatus().getCode());
        assertEquals("the handler broke: x", e.getStatus().getDescription());
        assertTrue(!e.getStatus().getDescription().contains("at dev."), "no stack trace on the wire");
    }

    @Test
    void handlerThatNeverCompletesStillHitsTheDeadline() {
        StatusException e = call(() -> ClientCalls.blockingUnaryCall(channel, TestService.HANG,
                CallOptions.DEFAULT.withDeadlineAfter(200, TimeUnit.MILLISECONDS), new byte[1]));
        assertEquals(Status.Code.DEADLINE_EXCEEDED, e.getStatus().getCode());
    }

    @Test
    void asciiAndBinaryMetadataInHeadersAndTrailers() {
        Metadata md = new Metadata();
        md.put(TestService.ASCII_KEY, "hello");
        byte[] blob = {0, 1, (byte) 0xfe, (byte) 0xff, 10, 13};
        md.put(TestService.BINARY_KEY, blob);
        ResponseMetadata capture = new ResponseMetadata();
        CallOptions opts = CallOptions.DEFAULT.withHeaders(md).withResponseMetadata(capture);
        assertArrayEquals("ok".getBytes(), ClientCalls.blockingUnaryCall(channel, TestService.META, opts, "ok".getBytes()));
        assertEquals("hdr-hello", capture.headers().get(TestService.ASCII_KEY));
        assertArrayEquals(blob, capture.headers().get(TestService.BINARY_KEY));
        assertEquals("trl-hello", capture.trailers().get(TestService.ASCII_KEY));
        assertArrayEquals(blob, capture.trailers().get(TestService.BINARY_KEY));
    }

    @Test
    void errorStatusCarriesDescriptionAndTrailers() {
        Metadata md = new Metadata().put(TestService.ASCII_KEY, "k");
        StatusException e = call(() -> ClientCalls.blockingUnaryCall(channel, TestService.META,
                CallOptions.DEFAULT.withHeaders(md), "F".getBytes()));
        assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode());
        assertEquals("no such thing", e.getStatus().getDescription());
        assertNotNull(e.getTrailers());
        assertEquals("trl-k", e.getTrailers().get(TestService.ASCII_KEY));
    }

    @Test
    void handlerIsToldOfCompletionWhenTrailersWaitedForWindow() throws Exception {
        java.util.concurrent.CountDownLatch completed = new java.util.concurrent.CountDownLatch(1);
        dev.rdmarpc.core.MethodDescriptor<byte[], byte[]> big = TestService.method("Big", dev.rdmarpc.core.MethodDescriptor.MethodType.UNARY);
        try (dev.rdmarpc.core.RpcServer s = dev.rdmarpc.core.RpcServer.forPort(0).maxInboundMessageSize(16 << 20)
                .addService(dev.rdmarpc.core.ServiceDefinition.builder(TestService.NAME).addMethod(big, (call, headers) -> {
                    call.request(1);
                    return new dev.rdmarpc.core.ServerCall.Listener<>() {
                        @Override
                        public void onHalfClose() {
                            call.sendHeaders(new Metadata());
                            call.sendMessage(new byte[5 << 20]); // larger than the 2 MiB window: TRAILERS queue behind it
                            call.close(Status.OK, new Metadata());
                        }

                        @Override
                        public void onComplete() {
                            completed.countDown();
                        }
                    };
                }).build()).build().start();
             dev.rdmarpc.core.RpcChannel ch = dev.rdmarpc.core.RpcChannel.forAddress("127.0.0.1", s.getPort()).maxInboundMessageSize(16 << 20).build()) {
            assertEquals(5 << 20, ClientCalls.blockingUnaryCall(ch, big, CallOptions.DEFAULT, new byte[1]).length);
            assertTrue(completed.await(60, TimeUnit.SECONDS), "ServerCall.Listener.onComplete after the queued TRAILERS went out");
        }
    }

    @Test
    void slowReaderKeepsTheServersBufferedBytesBounded() throws Exception {
        int size = 16 * 1024;
        Iterator<byte[]> it = ClientCalls.blockingServerStreamingCall(channel, TestService.FIREHOSE,
                CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), Bytes.ofInt(size));
        assertTrue(it.hasNext());
        Thread.sleep(500);
        long sent = service.firehoseSent.get();
        Thread.sleep(500);
        long later = service.firehoseSent.get();
        assertEquals(sent, later, "the server is blocked while the client does not read");
        long bufferedBytes = sent * size;
        assertTrue(bufferedBytes < 8L << 20, "bounded by the windows and the send queue: " + bufferedBytes + " bytes");
        for (int i = 0; i < 500; i++) {
            it.next();
        }
        assertTrue(service.firehoseSent.get() > sent, "reading lets the server go on");
    }
}
