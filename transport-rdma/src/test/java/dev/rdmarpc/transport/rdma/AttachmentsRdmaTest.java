package dev.rdmarpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.core.AttachmentCalls;
import dev.rdmarpc.core.CallExecutors;
import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.MethodDescriptor.MethodType;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.ServerCalls;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.WithAttachment;
import dev.rdmarpc.core.testing.LockCheckExtension;
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
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Attachments over RDMA (event mode): 1 MiB and 16 MiB attachments both ways on unary and streaming calls, an mmap'd
 * file region, and an attachment over the server's limit refused before any of it is sent; every slab, region, window
 * and queue pair back to its baseline after each test. Every release callback, handler and listener checks that it runs
 * under no lock of rdmarpc's ({@link LockCheckingInterceptors}): a grant ended by the peer's FIN or by its window's
 * invalidation, or at the connection's close, lets its memory go under the send lock.
 */
@Tag("rdma")
@ExtendWith(LockCheckExtension.class) // also where JUnit's extension autodetection is off (the guest's launcher)
class AttachmentsRdmaTest extends RdmaEndToEndBase {
    static final MethodDescriptor<byte[], byte[]> ECHO = MethodDescriptor.create("rdma.test.Attach/Echo", MethodType.UNARY,
            Bytes.MARSHALLER, Bytes.MARSHALLER);
    static final MethodDescriptor<byte[], byte[]> CHAT = MethodDescriptor.create("rdma.test.Attach/Chat",
            MethodType.BIDI_STREAMING, Bytes.MARSHALLER, Bytes.MARSHALLER);
    static final int LIMIT = 20 << 20;

    @TempDir
    Path dir;

    /** Sends each request's attachment straight back (the received view, released by the call once sent). */
    static ServiceDefinition attachEcho() {
        return ServiceDefinition.builder("rdma.test.Attach")
                .addMethod(ECHO, AttachmentCalls.server(ServerCalls.<WithAttachment<byte[]>, WithAttachment<byte[]>>asyncUnaryCall(
                        (req, out) -> {
                            out.onNext(req);
                            out.onCompleted();
                        })))
                .addMethod(CHAT, AttachmentCalls.server(ServerCalls.<WithAttachment<byte[]>, WithAttachment<byte[]>>asyncBidiStreamingCall(
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
                .build();
    }

    /** Collects responses, copying and releasing their attachments. */
    static final class Collect implements StreamObserver<WithAttachment<byte[]>> {
        final List<byte[]> attachments = new CopyOnWriteArrayList<>();
        final CompletableFuture<Throwable> done = new CompletableFuture<>();

        @Override
        public void onNext(WithAttachment<byte[]> value) {
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

        Throwable await() throws Exception {
            return done.get(RdmaTests.timeout(60_000), TimeUnit.MILLISECONDS);
        }
    }

    /** The server and channel, checking that handlers, listeners and release callbacks run under no lock of ours. */
    private RpcChannel start() throws Exception {
        startServer(b -> b.addService(attachEcho()).maxInboundAttachmentSize(LIMIT)
                .intercept(LockCheckingInterceptors.server()));
        return channel(b -> b.maxInboundAttachmentSize(LIMIT)
                .executor(LockCheckingInterceptors.checkedExecutor(CallExecutors.shared())));
    }

    private static MemorySegment filled(Arena arena, byte[] bytes) {
        MemorySegment s = arena.allocate(Math.max(1, bytes.length), 4096).asSlice(0, bytes.length);
        MemorySegment.copy(bytes, 0, s, ValueLayout.JAVA_BYTE, 0, bytes.length);
        return s;
    }

    @Test
    void attachmentsOfOneAndSixteenMiBTravelBothWaysOnUnaryAndStreamingCalls() throws Exception {
        RpcChannel channel = start();
        AtomicInteger releases = new AtomicInteger();
        Runnable released = LockCheckingInterceptors.checkedRelease(releases::incrementAndGet);
        try (Arena arena = Arena.ofShared()) {
            for (int size : new int[]{1 << 20, 16 << 20}) {
                byte[] bytes = Bytes.pattern(size, size >>> 20);
                Collect unary = new Collect();
                ClientCalls.asyncUnaryCall(AttachmentCalls.client(channel.newCall(ECHO, CallOptions.DEFAULT)),
                        WithAttachment.of(new byte[]{1}, filled(arena, bytes), released), unary);
                assertNull(unary.await());
                assertArrayEquals(bytes, unary.attachments.get(0), size + " B unary");
                assertRdma(channel);
                // chunks larger than a SEND went by rendezvous straight from the application's memory, whose
                // registration the connection keeps cached for the next send
                assertTrue(RdmaMetrics.ATTACHMENT_REGIONS.get() > 0, "attachment registrations cached");
            }
            byte[] a = Bytes.pattern(16 << 20, 3);
            byte[] b = Bytes.pattern(1 << 20, 4);
            Collect chat = new Collect();
            StreamObserver<WithAttachment<byte[]>> requests =
                    ClientCalls.asyncBidiStreamingCall(AttachmentCalls.client(channel.newCall(CHAT, CallOptions.DEFAULT)), chat);
            requests.onNext(WithAttachment.of(new byte[]{1}, filled(arena, a), released));
            requests.onNext(WithAttachment.of(new byte[]{2}));
            requests.onNext(WithAttachment.of(new byte[]{3}, filled(arena, b), released));
            requests.onCompleted();
            assertNull(chat.await());
            assertArrayEquals(a, chat.attachments.get(0), "16 MiB streamed");
            assertNull(chat.attachments.get(1));
            assertArrayEquals(b, chat.attachments.get(2), "1 MiB streamed");
            RdmaTests.await(RdmaTests.timeout(10_000), () -> releases.get() == 4, () -> "4 release callbacks, not " + releases.get());
        }
    }

    @Test
    void anAttachmentInOneFrameIsHandedOverWhereItsReadPutItAndOneOverSeveralFramesIsGathered() throws Exception {
        RpcChannel channel = start();
        try (Arena arena = Arena.ofShared()) {
            byte[] message = Bytes.pattern(300, 1);
            for (int size : new int[]{1 << 20, (1 << 20) + 1}) {
                byte[] bytes = Bytes.pattern(size, 6);
                long kept = RdmaMetrics.MESSAGE_FRAMES_KEPT.sum();
                Collect unary = new Collect();
                ClientCalls.asyncUnaryCall(AttachmentCalls.client(channel.newCall(ECHO, CallOptions.DEFAULT)),
                        WithAttachment.of(message, filled(arena, bytes), LockCheckingInterceptors.checkedRelease(null)), unary);
                assertNull(unary.await());
                assertArrayEquals(bytes, unary.attachments.get(0), size + " B echoed");
                assertRdma(channel);
                // the request's attachment at the server and the response's at the client: one frame each when it
                // fits the 1 MiB frame, kept as the view the application reads; two frames each when it does not,
                // gathered by copy (the message's own bytes, in a BEGIN frame of their own, are copied either way)
                long keptNow = RdmaMetrics.MESSAGE_FRAMES_KEPT.sum() - kept;
                assertEquals(size == 1 << 20 ? 2 : 0, keptNow, size + " B: MESSAGE frames kept");
            }
        }
    }

    @Test
    void anMmapedFileRegionTravelsAsAnAttachment() throws Exception {
        RpcChannel channel = start();
        Path file = dir.resolve("region.bin");
        byte[] content = Bytes.pattern(3 << 20, 9);
        Files.write(file, content);
        int offset = 8192 + 5;
        int length = 2 << 20;
        try (FileChannel fc = FileChannel.open(file, StandardOpenOption.READ); Arena arena = Arena.ofShared()) {
            MemorySegment region = fc.map(FileChannel.MapMode.READ_ONLY, 0, content.length, arena).asSlice(offset, length);
            Collect unary = new Collect();
            ClientCalls.asyncUnaryCall(AttachmentCalls.client(channel.newCall(ECHO, CallOptions.DEFAULT)),
                    WithAttachment.of(new byte[]{1}, region, LockCheckingInterceptors.checkedRelease(null)), unary);
            assertNull(unary.await());
            assertArrayEquals(java.util.Arrays.copyOfRange(content, offset, offset + length), unary.attachments.get(0));
        }
    }

    @Test
    void anAttachmentOverThePeersLimitFailsWithResourceExhaustedAndTheConnectionCarriesOn() throws Exception {
        RpcChannel channel = start();
        try (Arena arena = Arena.ofShared()) {
            Collect tooBig = new Collect();
            ClientCalls.asyncUnaryCall(AttachmentCalls.client(channel.newCall(ECHO, CallOptions.DEFAULT)),
                    WithAttachment.of(new byte[]{1}, arena.allocate(LIMIT + 1L), LockCheckingInterceptors.checkedRelease(null)), tooBig);
            Throwable t = tooBig.await();
            Status s = t instanceof StatusException se ? se.getStatus() : Status.fromThrowable(t);
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, s.getCode(), s::toString);
            assertTrue(s.getDescription().contains("maximum inbound attachment size"), s::toString);
            Collect ok = new Collect();
            byte[] bytes = Bytes.pattern(1 << 20, 5);
            ClientCalls.asyncUnaryCall(AttachmentCalls.client(channel.newCall(ECHO, CallOptions.DEFAULT)),
                    WithAttachment.of(new byte[]{1}, filled(arena, bytes), LockCheckingInterceptors.checkedRelease(null)), ok);
            assertNull(ok.await());
            assertArrayEquals(bytes, ok.attachments.get(0));
        }
    }

    @Test
    void attachmentsInFlightWhenTheChannelIsShutDownAreReleasedOnceUnderNoLock() throws Exception {
        RpcChannel channel = start();
        AtomicInteger releases = new AtomicInteger();
        try (Arena arena = Arena.ofShared()) {
            List<Collect> calls = new CopyOnWriteArrayList<>();
            for (int i = 0; i < 4; i++) {
                Collect c = new Collect();
                calls.add(c);
                ClientCalls.asyncUnaryCall(AttachmentCalls.client(channel.newCall(ECHO, CallOptions.DEFAULT)),
                        WithAttachment.of(new byte[]{1}, filled(arena, Bytes.pattern(8 << 20, i)),
                                LockCheckingInterceptors.checkedRelease(releases::incrementAndGet)), c);
            }
            channel.shutdownNow(); // whatever each send had reached: staged, offered by rendezvous, read, or done
            for (Collect c : calls) {
                c.await();
            }
            RdmaTests.await(RdmaTests.timeout(30_000), () -> releases.get() == 4,
                    () -> "4 release callbacks, not " + releases.get());
            assertEquals(4, releases.get(), "each released once");
        }
    }
}
