package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.MethodDescriptor.MethodType;
import dev.rdmarpc.core.ServerCallStreamObserver;
import dev.rdmarpc.core.ServerCalls;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.StreamObserver;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** A byte[] service with every call kind, hand-written descriptors, for the end-to-end RDMA tests. */
final class EchoService {
    static final String NAME = "rdma.test.Echo";

    static MethodDescriptor<byte[], byte[]> method(String name, MethodType type) {
        return MethodDescriptor.create(NAME + "/" + name, type, Bytes.MARSHALLER, Bytes.MARSHALLER);
    }

    /** Returns the request. */
    static final MethodDescriptor<byte[], byte[]> ECHO = method("Echo", MethodType.UNARY);
    /** Request: count, size, seed (ints); responds with count messages pattern(size, seed + i). */
    static final MethodDescriptor<byte[], byte[]> STREAM = method("Stream", MethodType.SERVER_STREAMING);
    /** Responds with (messages, total bytes, xor of every message's first byte) once the client half-closes. */
    static final MethodDescriptor<byte[], byte[]> COUNT = method("Count", MethodType.CLIENT_STREAMING);
    /** Answers every message with its bytes inverted. */
    static final MethodDescriptor<byte[], byte[]> CHAT = method("Chat", MethodType.BIDI_STREAMING);
    /** Never answers; records cancellation. */
    static final MethodDescriptor<byte[], byte[]> HANG = method("Hang", MethodType.UNARY);
    /** Request: message size (int); streams messages of that size until cancelled. */
    static final MethodDescriptor<byte[], byte[]> FIREHOSE = method("Firehose", MethodType.SERVER_STREAMING);

    final BlockingQueue<String> events = new LinkedBlockingQueue<>();
    final AtomicLong firehoseSent = new AtomicLong();
    /** HANG calls that reached their handler. */
    final AtomicInteger hangCalls = new AtomicInteger();

    ServiceDefinition definition() {
        return ServiceDefinition.builder(NAME)
                .addMethod(ECHO, ServerCalls.asyncUnaryCall((req, obs) -> {
                    obs.onNext(req);
                    obs.onCompleted();
                }))
                .addMethod(STREAM, ServerCalls.asyncServerStreamingCall((req, obs) -> {
                    int count = Bytes.intAt(req, 0);
                    int size = Bytes.intAt(req, 1);
                    int seed = Bytes.intAt(req, 2);
                    ServerCallStreamObserver<byte[]> sobs = (ServerCallStreamObserver<byte[]>) obs;
                    for (int i = 0; i < count && !sobs.isCancelled(); i++) {
                        obs.onNext(Bytes.pattern(size, seed + i));
                    }
                    if (sobs.isCancelled()) {
                        events.add("stream-cancelled");
                        return;
                    }
                    obs.onCompleted();
                }))
                .addMethod(COUNT, ServerCalls.asyncClientStreamingCall(obs -> new StreamObserver<>() {
                    int messages;
                    long bytes;
                    int xor;

                    @Override
                    public void onNext(byte[] value) {
                        messages++;
                        bytes += value.length;
                        for (byte b : value) {
                            xor ^= b;
                        }
                    }

                    @Override
                    public void onError(Throwable t) {
                        events.add("count-error");
                    }

                    @Override
                    public void onCompleted() {
                        obs.onNext(Bytes.ofInts(messages, (int) bytes, xor));
                        obs.onCompleted();
                    }
                }))
                .addMethod(CHAT, ServerCalls.asyncBidiStreamingCall(obs -> new StreamObserver<>() {
                    @Override
                    public void onNext(byte[] value) {
                        byte[] reply = value.clone();
                        for (int i = 0; i < reply.length; i++) {
                            reply[i] = (byte) ~reply[i];
                        }
                        obs.onNext(reply);
                    }

                    @Override
                    public void onError(Throwable t) {
                        events.add("chat-error");
                    }

                    @Override
                    public void onCompleted() {
                        obs.onCompleted();
                    }
                }))
                .addMethod(HANG, ServerCalls.asyncUnaryCall((req, obs) -> {
                    ServerCallStreamObserver<byte[]> sobs = (ServerCallStreamObserver<byte[]>) obs;
                    sobs.setOnCancelHandler(() -> events.add("hang-cancelled"));
                    hangCalls.incrementAndGet();
                }))
                .addMethod(FIREHOSE, ServerCalls.asyncServerStreamingCall((req, obs) -> {
                    ServerCallStreamObserver<byte[]> sobs = (ServerCallStreamObserver<byte[]>) obs;
                    byte[] chunk = Bytes.pattern(Bytes.intAt(req, 0), 7);
                    try {
                        while (!sobs.isCancelled()) {
                            obs.onNext(chunk);
                            firehoseSent.incrementAndGet();
                        }
                    } catch (RuntimeException e) {
                        events.add("firehose-failed:" + e);
                        return;
                    }
                    events.add("firehose-stopped");
                }))
                .build();
    }
}
