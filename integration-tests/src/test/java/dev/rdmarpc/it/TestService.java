package dev.rdmarpc.it;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.MethodDescriptor.MethodType;
import dev.rdmarpc.core.ServerCallStreamObserver;
import dev.rdmarpc.core.ServerCalls;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.testing.LockCheck;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** A service exercising every call kind and the awkward cases (calls held open, throws, metadata, streams). */
final class TestService {
    static final String NAME = "test.TestService";
    static final Metadata.Key<String> ASCII_KEY = Metadata.Key.ascii("x-ascii");
    static final Metadata.Key<byte[]> BINARY_KEY = Metadata.Key.binary("x-blob-bin");

    static MethodDescriptor<byte[], byte[]> method(String name, MethodType type) {
        return MethodDescriptor.create(NAME + "/" + name, type, Bytes.MARSHALLER, Bytes.MARSHALLER);
    }

    static final MethodDescriptor<byte[], byte[]> ECHO = method("Echo", MethodType.UNARY);
    /** Request: 4-byte count, 4-byte size; responds with count messages of size bytes. */
    static final MethodDescriptor<byte[], byte[]> STREAM = method("Stream", MethodType.SERVER_STREAMING);
    /** Responds with the concatenation of the requests' lengths as a 4-byte int. */
    static final MethodDescriptor<byte[], byte[]> COUNT = method("Count", MethodType.CLIENT_STREAMING);
    static final MethodDescriptor<byte[], byte[]> CHAT = method("Chat", MethodType.BIDI_STREAMING);
    /** Never responds; records deadline and cancellation. */
    static final MethodDescriptor<byte[], byte[]> HANG = method("Hang", MethodType.UNARY);
    /** Throws an exception with a message. */
    static final MethodDescriptor<byte[], byte[]> THROW = method("Throw", MethodType.UNARY);
    /** Echoes request metadata into response headers and trailers; fails with NOT_FOUND if asked. */
    static final MethodDescriptor<byte[], byte[]> META = method("Meta", MethodType.UNARY);
    /** Streams forever as fast as onNext returns, counting what it sent. */
    static final MethodDescriptor<byte[], byte[]> FIREHOSE = method("Firehose", MethodType.SERVER_STREAMING);
    /** Counts {@link #holdStarted} down, then echoes once the test counts {@link #holdRelease} down. */
    static final MethodDescriptor<byte[], byte[]> HOLD = method("Hold", MethodType.UNARY);

    final AtomicLong lastRemainingNanos = new AtomicLong(-1);
    final CountDownLatch hangCancelled = new CountDownLatch(1);
    final AtomicInteger calls = new AtomicInteger();
    final AtomicLong firehoseSent = new AtomicLong();
    /** The thread running the FIREHOSE handler, once it runs. */
    volatile Thread firehoseThread;
    /** Every thread that has run a FIREHOSE handler, in the order they started. */
    final java.util.Queue<Thread> firehoseThreads = new java.util.concurrent.ConcurrentLinkedQueue<>();
    /** Counted down when a HOLD call reaches its handler. */
    final CountDownLatch holdStarted = new CountDownLatch(1);
    /** What HOLD calls wait for before they answer. */
    final CountDownLatch holdRelease = new CountDownLatch(1);
    /** HOLD calls that reached their handler. */
    final AtomicInteger holdCalls = new AtomicInteger();
    /** HOLD handlers running now, and the most that ever ran at once. */
    final AtomicInteger holdActive = new AtomicInteger();
    final AtomicInteger holdPeak = new AtomicInteger();
    final BlockingQueue<String> events = new LinkedBlockingQueue<>();

    ServiceDefinition definition() {
        return ServiceDefinition.builder(NAME)
                .addMethod(ECHO, ServerCalls.asyncUnaryCall((req, obs) -> {
                    LockCheck.assertNoLockHeld("the Echo handler");
                    calls.incrementAndGet();
                    obs.onNext(req);
                    obs.onCompleted();
                }))
                .addMethod(STREAM, ServerCalls.asyncServerStreamingCall((req, obs) -> {
                    LockCheck.assertNoLockHeld("the Stream handler");
                    calls.incrementAndGet();
                    int count = Bytes.toInt(req);
                    int size = Bytes.toInt(java.util.Arrays.copyOfRange(req, 4, 8));
                    for (int i = 0; i < count; i++) {
                        obs.onNext(Bytes.pattern(size, i));
                    }
                    obs.onCompleted();
                }))
                .addMethod(COUNT, ServerCalls.asyncClientStreamingCall(obs -> new StreamObserver<>() {
                    long total;

                    @Override
                    public void onNext(byte[] value) {
                        LockCheck.assertNoLockHeld("the Count observer's onNext");
                        total += value.length;
                    }

                    @Override
                    public void onError(Throwable t) {
                        LockCheck.assertNoLockHeld("a request observer's onError");
                        events.add("count-error:" + Status.fromThrowable(t).getCode());
                    }

                    @Override
                    public void onCompleted() {
                        obs.onNext(Bytes.ofInt((int) total));
                        obs.onCompleted();
                    }
                }))
                .addMethod(CHAT, ServerCalls.asyncBidiStreamingCall(obs -> new StreamObserver<>() {
                    @Override
                    public void onNext(byte[] value) {
                        LockCheck.assertNoLockHeld("the Chat observer's onNext");
                        byte[] reply = value.clone();
                        for (int i = 0; i < reply.length; i++) {
                            reply[i] = (byte) ~reply[i];
                        }
                        obs.onNext(reply);
                    }

                    @Override
                    public void onError(Throwable t) {
                        LockCheck.assertNoLockHeld("a request observer's onError");
                        events.add("chat-error:" + Status.fromThrowable(t).getCode());
                    }

                    @Override
                    public void onCompleted() {
                        obs.onCompleted();
                    }
                }))
                .addMethod(HANG, ServerCalls.asyncUnaryCall((req, obs) -> {
                    calls.incrementAndGet();
                    ServerCallStreamObserver<byte[]> sobs = (ServerCallStreamObserver<byte[]>) obs;
                    lastRemainingNanos.set(sobs.getDeadline() == null ? -2 : sobs.getDeadline().remainingNanos());
                    sobs.setOnCancelHandler(() -> {
                        LockCheck.assertNoLockHeld("the Hang handler's cancel handler");
                        events.add("hang-cancelled");
                        hangCancelled.countDown();
                    });
                }))
                .addMethod(THROW, ServerCalls.asyncUnaryCall((req, obs) -> {
                    throw new IllegalStateException("the handler broke: " + new String(req));
                }))
                .addMethod(META, ServerCalls.asyncUnaryCall((req, obs) -> {
                    LockCheck.assertNoLockHeld("the Meta handler");
                    ServerCallStreamObserver<byte[]> sobs = (ServerCallStreamObserver<byte[]>) obs;
                    Metadata in = sobs.getRequestHeaders();
                    Metadata headers = new Metadata();
                    headers.put(ASCII_KEY, "hdr-" + in.get(ASCII_KEY));
                    Metadata trailers = new Metadata();
                    trailers.put(ASCII_KEY, "trl-" + in.get(ASCII_KEY));
                    if (in.containsKey(BINARY_KEY)) {
                        headers.put(BINARY_KEY, in.get(BINARY_KEY));
                        trailers.put(BINARY_KEY, in.get(BINARY_KEY));
                    }
                    sobs.setResponseHeaders(headers);
                    if (req.length > 0 && req[0] == 'F') {
                        obs.onError(Status.NOT_FOUND.withDescription("no such thing").asException(trailers));
                        return;
                    }
                    sobs.setTrailers(trailers);
                    obs.onNext(req);
                    obs.onCompleted();
                }))
                .addMethod(FIREHOSE, ServerCalls.asyncServerStreamingCall((req, obs) -> {
                    ServerCallStreamObserver<byte[]> sobs = (ServerCallStreamObserver<byte[]>) obs;
                    firehoseThread = Thread.currentThread();
                    firehoseThreads.add(Thread.currentThread());
                    byte[] chunk = new byte[Bytes.toInt(req)];
                    while (!sobs.isCancelled()) {
                        obs.onNext(chunk);
                        firehoseSent.incrementAndGet();
                    }
                    events.add("firehose-stopped");
                }))
                .addMethod(HOLD, ServerCalls.asyncUnaryCall(this::hold))
                .build();
    }

    private void hold(byte[] req, StreamObserver<byte[]> obs) {
        LockCheck.assertNoLockHeld("the Hold handler");
        holdCalls.incrementAndGet();
        holdPeak.accumulateAndGet(holdActive.incrementAndGet(), Math::max);
        holdStarted.countDown();
        boolean released;
        try {
            released = holdRelease.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            holdActive.decrementAndGet();
            obs.onError(Status.CANCELLED.withDescription("interrupted").asException());
            return;
        }
        holdActive.decrementAndGet(); // before the answer, so the client's next call never meets this one still counted
        if (!released) {
            obs.onError(Status.INTERNAL.withDescription("the test never released the call").asException());
            return;
        }
        obs.onNext(req);
        obs.onCompleted();
    }
}
